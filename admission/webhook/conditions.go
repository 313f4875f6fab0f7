package webhook

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/cel-go/common/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// activation is what match conditions see, made once per admission (and
// again after a patch): object, oldObject and request as JSON values.
func (r *request) activation() (map[string]any, error) {
	if r.vars != nil {
		return r.vars, nil
	}
	vars := map[string]any{expr.ObjectVar: nil, expr.OldObjectVar: nil}
	for k, v := range r.authz {
		vars[k] = v
	}
	for name, data := range map[string][]byte{expr.ObjectVar: r.object, expr.OldObjectVar: r.oldObject} {
		if data == nil {
			continue
		}
		var v any
		if err := utiljson.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		vars[name] = v
	}
	_, body, err := r.review("v1")
	if err != nil {
		return nil, err
	}
	var review struct {
		Request map[string]any `json:"request"`
	}
	if err := utiljson.Unmarshal(body, &review); err != nil {
		return nil, err
	}
	vars[expr.RequestVar] = review.Request
	r.vars = vars
	return vars, nil
}

// errCostBudget is kube's error of conditions that ran out of budget.
var errCostBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// conditionsMatch evaluates h's match conditions in order: the first
// false one ends the match; errors count only when none is false.
func conditionsMatch(ctx context.Context, h *hook, r *request) (bool, error) {
	if len(h.conditions) == 0 {
		return true, nil
	}
	vars, err := r.activation()
	if err != nil {
		return false, err
	}
	budget := int64(celconfig.RuntimeCELCostBudgetMatchConditions)
	var errs []error
	for _, c := range h.conditions {
		val, details, err := c.program.ContextEval(ctx, vars)
		if details != nil && details.ActualCost() != nil {
			budget -= int64(*details.ActualCost())
		}
		switch {
		case budget < 0:
			return false, errCostBudget
		case err != nil:
			errs = append(errs, fmt.Errorf("expression '%s' resulted in error: %w", c.expression, err))
		case val == types.False:
			return false, nil
		}
	}
	return len(errs) == 0, errors.Join(errs...)
}
