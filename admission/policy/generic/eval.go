package generic

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// Program is a compiled expression and its text, for messages.
type Program struct {
	Name, Expression string
	Prog             cel.Program
}

// Compiled are the parts every policy has: variables, in order, and
// match conditions.
type Compiled struct {
	Compiler   *expr.Compiler
	Variables  []Program
	Conditions []Program
}

// Compile compiles a policy's variables, then its match conditions, in
// the environment d declares.
func Compile(vars []arv1.Variable, conditions []arv1.MatchCondition, d expr.Decls) (Compiled, error) {
	out := Compiled{Compiler: expr.NewCompiler(true)}
	for _, v := range vars {
		r := out.Compiler.AddVariable(v.Name, v.Expression, d, true)
		if r.Err != nil {
			return out, fmt.Errorf("variable %q: %w", v.Name, r.Err)
		}
		out.Variables = append(out.Variables, Program{v.Name, v.Expression, r.Program})
	}
	for _, mc := range conditions {
		r := out.Compiler.Compile(mc.Expression, d, true, cel.BoolType)
		if r.Err != nil {
			return out, fmt.Errorf("matchCondition %q: %w", mc.Name, r.Err)
		}
		out.Conditions = append(out.Conditions, Program{mc.Name, mc.Expression, r.Program})
	}
	return out, nil
}

// ErrBudget is kube's error of expressions that ran out of their budget.
var ErrBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// Evaluation is one run of a policy's expressions on one input, within
// one cost budget. It is the expressions' activation: base's names, then
// params and variables, without a copy of base per run.
type Evaluation struct {
	ctx       context.Context
	compiled  *Compiled
	base      map[string]any
	hasParams bool
	param     any
	variables *lazy.MapValue // made when an expression first uses it
	budget    int64
}

var _ interpreter.Activation = (*Evaluation)(nil)

// NewEvaluation binds base (object, oldObject, request, namespaceObject,
// authorizer), params when the policy has them, and the variables of c,
// each evaluated when first used.
func (c *Compiled) NewEvaluation(ctx context.Context, base map[string]any, hasParams bool, param any, budget int64) *Evaluation {
	return &Evaluation{ctx: ctx, compiled: c, base: base, hasParams: hasParams, param: param, budget: budget}
}

// ResolveName is the value of a name the expressions use.
func (e *Evaluation) ResolveName(name string) (any, bool) {
	switch name {
	case expr.VariablesVar:
		if e.variables == nil {
			e.variables = e.newVariables()
		}
		return e.variables, true
	case expr.ParamsVar:
		if e.hasParams {
			return e.param, true
		}
	}
	v, ok := e.base[name]
	return v, ok
}

func (e *Evaluation) newVariables() *lazy.MapValue {
	c := e.compiled
	vars := lazy.NewMapValue(c.Compiler.VariablesType().CelType())
	for _, v := range c.Variables {
		vars.Append(v.Name, func(*lazy.MapValue) ref.Val {
			val, err := e.Eval(v)
			if err != nil {
				return types.WrapErr(err)
			}
			return val
		})
	}
	return vars
}

// Parent: an Evaluation has none.
func (e *Evaluation) Parent() interpreter.Activation { return nil }

// Eval evaluates p, charging its cost to the budget.
func (e *Evaluation) Eval(p Program) (ref.Val, error) {
	if e.budget < 0 {
		return nil, ErrBudget
	}
	val, details, err := p.Prog.ContextEval(e.ctx, e)
	if details != nil && details.ActualCost() != nil {
		e.budget -= int64(*details.ActualCost())
	}
	if e.budget < 0 {
		return nil, ErrBudget
	}
	if err != nil {
		return nil, fmt.Errorf("expression '%v' resulted in error: %w", p.Expression, err)
	}
	return val, nil
}

// MatchConditions: false at the first false condition; an error counts
// only when none is false.
func (c *Compiled) MatchConditions(e *Evaluation) (bool, error) {
	var errs []error
	for _, p := range c.Conditions {
		val, err := e.Eval(p)
		switch {
		case errors.Is(err, ErrBudget):
			return false, err
		case err != nil:
			errs = append(errs, err)
		case val == types.False:
			return false, nil
		}
	}
	return len(errs) == 0, errors.Join(errs...)
}
