package validating

import (
	"fmt"

	"github.com/google/cel-go/cel"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// policy is a ValidatingAdmissionPolicy compiled once per version.
type policy struct {
	name      string
	failOpen  bool // failurePolicy Ignore
	hasParams bool
	paramKind *arv1.ParamKind
	match     *matcher
	compiler  *expr.Compiler
	// err is why the policy cannot run: its failure policy decides.
	err         error
	conditions  []program
	variables   []program
	validations []validation
	annotations []program // name is the key
}

type program struct {
	name, expression string
	prog             cel.Program
}

type validation struct {
	program
	message string
	reason  metav1.StatusReason
	msgProg cel.Program // messageExpression, nil without
}

// matcher is compiled MatchResources.
type matcher struct {
	namespaceSel, objectSel labels.Selector
	rules, exclude          []arv1.NamedRuleWithOperations
}

func compileMatch(m *arv1.MatchResources) (*matcher, error) {
	if m == nil {
		return nil, nil
	}
	out := &matcher{rules: m.ResourceRules, exclude: m.ExcludeResourceRules}
	var err error
	if out.namespaceSel, err = selector(m.NamespaceSelector); err != nil {
		return nil, err
	}
	if out.objectSel, err = selector(m.ObjectSelector); err != nil {
		return nil, err
	}
	return out, nil
}

func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

func compilePolicy(p *arv1.ValidatingAdmissionPolicy) *policy {
	out := &policy{name: p.Name, paramKind: p.Spec.ParamKind, hasParams: p.Spec.ParamKind != nil,
		failOpen: p.Spec.FailurePolicy != nil && *p.Spec.FailurePolicy == arv1.Ignore}
	out.err = out.compile(&p.Spec)
	return out
}

func (p *policy) compile(spec *arv1.ValidatingAdmissionPolicySpec) error {
	var err error
	if p.match, err = compileMatch(spec.MatchConstraints); err != nil {
		return err
	}
	p.compiler = expr.NewCompiler(true)
	c := p.compiler
	withAuthz := expr.Decls{Params: p.hasParams, Authorizer: true}
	for _, v := range spec.Variables {
		r := c.AddVariable(v.Name, v.Expression, withAuthz, true)
		if r.Err != nil {
			return fmt.Errorf("variable %q: %w", v.Name, r.Err)
		}
		p.variables = append(p.variables, program{v.Name, v.Expression, r.Program})
	}
	for _, mc := range spec.MatchConditions {
		r := c.Compile(mc.Expression, withAuthz, true, cel.BoolType)
		if r.Err != nil {
			return fmt.Errorf("matchCondition %q: %w", mc.Name, r.Err)
		}
		p.conditions = append(p.conditions, program{mc.Name, mc.Expression, r.Program})
	}
	for _, v := range spec.Validations {
		r := c.Compile(v.Expression, withAuthz, true, cel.BoolType)
		if r.Err != nil {
			return r.Err
		}
		val := validation{program: program{"", v.Expression, r.Program}, message: v.Message, reason: metav1.StatusReasonInvalid}
		if v.Reason != nil {
			val.reason = *v.Reason
		}
		if v.MessageExpression != "" {
			m := c.Compile(v.MessageExpression, expr.Decls{Params: p.hasParams}, true, cel.StringType)
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
		p.annotations = append(p.annotations, program{a.Key, a.ValueExpression, r.Program})
	}
	return nil
}
