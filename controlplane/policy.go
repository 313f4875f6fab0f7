package controlplane

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/policy"
)

// priorityPolicy orders policy in /apis, as kube.
const priorityPolicy = 17100

// policyGroup is policy/v1: PodDisruptionBudgets, which pods/eviction
// consults (Eviction itself is served by pods/eviction).
func (f *storeBuilder) policyGroup() (builtGroup, error) {
	specs := []resourceSpec{
		{name: "poddisruptionbudgets", kind: "PodDisruptionBudget", strategy: policy.PDBStrategy{},
			status: policy.PDBStatusStrategy{}, shortNames: []string{"pdb"},
			new:     func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
			newList: func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} }},
	}
	return f.buildGroup(policyv1.GroupName, priorityPolicy, policyv1.SchemeGroupVersion, specs)
}
