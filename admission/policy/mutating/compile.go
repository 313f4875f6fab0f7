package mutating

import (
	"github.com/google/cel-go/cel"
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/admission/policy/expr"
	"github.com/capstan-io/capstan/admission/policy/generic"
)

// policy is a MutatingAdmissionPolicy compiled once per generation.
type policy struct {
	name      string
	failOpen  bool // failurePolicy Ignore
	reinvoke  bool // reinvocationPolicy IfNeeded
	paramKind *arv1.ParamKind
	match     *generic.Matcher
	generic.Compiled
	// err is why the policy cannot run: its failure policy decides.
	err       error
	mutations []mutation
}

// mutation is one compiled mutation: an ApplyConfiguration, else a
// JSONPatch.
type mutation struct {
	generic.Program
	apply bool
}

// The types the mutations' expressions must evaluate to, kube's.
var (
	applyConfigurationType = cel.ObjectType("Object")
	jsonPatchType          = cel.ListType(cel.ObjectType("JSONPatch"))
)

func compilePolicy(p *arv1.MutatingAdmissionPolicy) *policy {
	out := &policy{name: p.Name, paramKind: p.Spec.ParamKind,
		failOpen: p.Spec.FailurePolicy != nil && *p.Spec.FailurePolicy == arv1.Ignore,
		reinvoke: p.Spec.ReinvocationPolicy == arv1.IfNeededReinvocationPolicy}
	out.err = out.compile(&p.Spec)
	return out
}

func (p *policy) compile(spec *arv1.MutatingAdmissionPolicySpec) error {
	var err error
	if p.match, err = generic.CompileMatch(spec.MatchConstraints); err != nil {
		return err
	}
	d := expr.Decls{Params: p.paramKind != nil, Authorizer: true}
	if p.Compiled, err = generic.Compile(spec.Variables, spec.MatchConditions, d); err != nil {
		return err
	}
	d.PatchTypes = true
	for _, m := range spec.Mutations {
		var text string
		want := jsonPatchType
		switch {
		case m.PatchType == arv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			text, want = m.ApplyConfiguration.Expression, applyConfigurationType
		case m.PatchType == arv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			text = m.JSONPatch.Expression
		default:
			continue
		}
		r := p.Compiler.Compile(text, d, true, want)
		if r.Err != nil {
			return r.Err
		}
		p.mutations = append(p.mutations, mutation{Program: generic.Program{Expression: text, Prog: r.Program}, apply: want == applyConfigurationType})
	}
	return nil
}

// Source keeps the policies, compiled once per generation, with their
// bindings.
type Source = generic.Source[*arv1.MutatingAdmissionPolicy, *arv1.MutatingAdmissionPolicyBinding, *policy]

// NewSource returns an empty source; Run fills it.
func NewSource() *Source {
	return generic.NewSource(generic.Kind[*arv1.MutatingAdmissionPolicy, *arv1.MutatingAdmissionPolicyBinding, *policy]{
		Informers: func(f informers.SharedInformerFactory) (cache.SharedIndexInformer, cache.SharedIndexInformer) {
			v1 := f.Admissionregistration().V1()
			return v1.MutatingAdmissionPolicies().Informer(), v1.MutatingAdmissionPolicyBindings().Informer()
		},
		PolicyName:     func(b *arv1.MutatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
		MatchResources: func(b *arv1.MutatingAdmissionPolicyBinding) *arv1.MatchResources { return b.Spec.MatchResources },
		Compile:        compilePolicy,
	})
}
