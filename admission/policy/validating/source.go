package validating

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/admission/policy/generic"
)

// Source keeps the policies, compiled once per generation, with their
// bindings.
type Source = generic.Source[*arv1.ValidatingAdmissionPolicy, *arv1.ValidatingAdmissionPolicyBinding, *policy]

type boundPolicy = generic.Bound[*arv1.ValidatingAdmissionPolicyBinding, *policy]

// NewSource returns an empty source; Run fills it.
func NewSource() *Source {
	return generic.NewSource(generic.Kind[*arv1.ValidatingAdmissionPolicy, *arv1.ValidatingAdmissionPolicyBinding, *policy]{
		Informers: func(f informers.SharedInformerFactory) (cache.SharedIndexInformer, cache.SharedIndexInformer) {
			v1 := f.Admissionregistration().V1()
			return v1.ValidatingAdmissionPolicies().Informer(), v1.ValidatingAdmissionPolicyBindings().Informer()
		},
		PolicyName:     func(b *arv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
		MatchResources: func(b *arv1.ValidatingAdmissionPolicyBinding) *arv1.MatchResources { return b.Spec.MatchResources },
		Compile:        compilePolicy,
	})
}
