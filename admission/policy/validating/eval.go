package validating

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// decision is a validation that failed, or an expression that errored.
type decision struct {
	message string
	reason  metav1.StatusReason
	index   int
	errored bool // its failure policy decides
}

// evaluation is one run of a policy's expressions on one param.
type evaluation struct {
	ctx        context.Context
	activation map[string]any
	budget     int64
}

var errBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

func (e *evaluation) eval(p program) (ref.Val, error) {
	if e.budget < 0 {
		return nil, errBudget
	}
	val, details, err := p.prog.ContextEval(e.ctx, e.activation)
	if details != nil && details.ActualCost() != nil {
		e.budget -= int64(*details.ActualCost())
	}
	if e.budget < 0 {
		return nil, errBudget
	}
	if err != nil {
		return nil, fmt.Errorf("expression '%v' resulted in error: %w", p.expression, err)
	}
	return val, nil
}

// newEvaluation binds base (object, oldObject, request, namespaceObject),
// param and the policy's variables, evaluated when first used.
func (p *policy) newEvaluation(ctx context.Context, base map[string]any, param any) *evaluation {
	e := &evaluation{ctx: ctx, activation: make(map[string]any, len(base)+2), budget: celconfig.RuntimeCELCostBudget}
	for k, v := range base {
		e.activation[k] = v
	}
	if p.hasParams {
		e.activation[expr.ParamsVar] = param
	}
	vars := lazy.NewMapValue(p.compiler.VariablesType().CelType())
	for _, v := range p.variables {
		vars.Append(v.name, func(*lazy.MapValue) ref.Val {
			val, err := e.eval(v)
			if err != nil {
				return types.WrapErr(err)
			}
			return val
		})
	}
	e.activation[expr.VariablesVar] = vars
	return e
}

// matchConditions: false at the first false condition; an error counts
// only when none is false.
func (p *policy) matchConditions(e *evaluation) (bool, error) {
	var errs []error
	for _, c := range p.conditions {
		val, err := e.eval(c)
		switch {
		case errors.Is(err, errBudget):
			return false, err
		case err != nil:
			errs = append(errs, err)
		case val == types.False:
			return false, nil
		}
	}
	return len(errs) == 0, errors.Join(errs...)
}

// validate runs the validations and returns the failed ones.
func (p *policy) validate(e *evaluation) []decision {
	var out []decision
	for i, v := range p.validations {
		val, err := e.eval(v.program)
		if err != nil {
			out = append(out, decision{message: err.Error(), index: i, errored: true})
			continue
		}
		if val == types.True {
			continue
		}
		out = append(out, decision{message: p.message(e, &v), reason: v.reason, index: i})
	}
	return out
}

// message is a failed validation's message: its messageExpression's
// result, else its message, else kube's default.
func (p *policy) message(e *evaluation, v *validation) string {
	if v.msgProg != nil {
		val, err := e.eval(program{expression: "messageExpression", prog: v.msgProg})
		if s, ok := valueString(val); err == nil && ok {
			s = strings.TrimSpace(s)
			if s != "" && len(s) <= celconfig.MaxEvaluatedMessageExpressionSizeBytes && !strings.Contains(s, "\n") {
				return s
			}
		}
	}
	if m := strings.TrimSpace(v.message); m != "" {
		return m
	}
	return "failed expression: " + strings.TrimSpace(v.expression)
}

func valueString(v ref.Val) (string, bool) {
	if v == nil {
		return "", false
	}
	s, ok := v.Value().(string)
	return s, ok
}

// auditAnnotations evaluates the audit annotations: key to value, null
// and empty values left out.
func (p *policy) auditAnnotations(e *evaluation) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range p.annotations {
		val, err := e.eval(a)
		if err != nil {
			return nil, err
		}
		if s, ok := valueString(val); ok && strings.TrimSpace(s) != "" {
			s = strings.TrimSpace(s)
			if len(s) > maxAuditAnnotationValueLength {
				s = s[:maxAuditAnnotationValueLength]
			}
			out[a.name] = s
		}
	}
	return out, nil
}

// maxAuditAnnotationValueLength is kube's cut of an annotation's value.
const maxAuditAnnotationValueLength = 10 * 1024
