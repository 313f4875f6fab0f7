package validating

import (
	"github.com/google/cel-go/cel"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission/policy/expr"
	"github.com/capstan-io/capstan/admission/policy/generic"
)

// policy is a ValidatingAdmissionPolicy compiled once per generation.
type policy struct {
	name      string
	failOpen  bool // failurePolicy Ignore
	paramKind *arv1.ParamKind
	match     *generic.Matcher
	generic.Compiled
	// err is why the policy cannot run: its failure policy decides.
	err         error
	validations []validation
	annotations []generic.Program // name is the key
}

type validation struct {
	generic.Program
	message string
	reason  metav1.StatusReason
	msgProg cel.Program // messageExpression, nil without
}

func compilePolicy(p *arv1.ValidatingAdmissionPolicy) *policy {
	out := &policy{name: p.Name, paramKind: p.Spec.ParamKind,
		failOpen: p.Spec.FailurePolicy != nil && *p.Spec.FailurePolicy == arv1.Ignore}
	out.err = out.compile(&p.Spec)
	return out
}

func (p *policy) compile(spec *arv1.ValidatingAdmissionPolicySpec) error {
	var err error
	if p.match, err = generic.CompileMatch(spec.MatchConstraints); err != nil {
		return err
	}
	withAuthz := expr.Decls{Params: p.paramKind != nil, Authorizer: true}
	if p.Compiled, err = generic.Compile(spec.Variables, spec.MatchConditions, withAuthz); err != nil {
		return err
	}
	c := p.Compiler
	for _, v := range spec.Validations {
		r := c.Compile(v.Expression, withAuthz, true, cel.BoolType)
		if r.Err != nil {
			return r.Err
		}
		val := validation{Program: generic.Program{Expression: v.Expression, Prog: r.Program}, message: v.Message, reason: metav1.StatusReasonInvalid}
		if v.Reason != nil {
			val.reason = *v.Reason
		}
		if v.MessageExpression != "" {
			m := c.Compile(v.MessageExpression, expr.Decls{Params: p.paramKind != nil}, true, cel.StringType)
			if m.Err != nil {
				return m.Err
			}
			val.msgProg = m.Program
		}
		p.validations = append(p.validations, val)
	}
	for _, a := range spec.AuditAnnotations {
		r := c.Compile(a.ValueExpression, withAuthz, true, cel.StringType, cel.NullType)
		if r.Err != nil {
			return r.Err
		}
		p.annotations = append(p.annotations, generic.Program{Name: a.Key, Expression: a.ValueExpression, Prog: r.Program})
	}
	return nil
}
