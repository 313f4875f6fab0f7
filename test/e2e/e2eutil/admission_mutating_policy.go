package e2eutil

import (
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (e *Env) BindMutating(t *testing.T, p *arv1.MutatingAdmissionPolicy, ref *arv1.ParamRef) {
	t.Helper()
	c := e.Clientset.AdmissionregistrationV1()
	if _, err := c.MutatingAdmissionPolicies().Create(Ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &arv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Spec: arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: p.Name, ParamRef: ref}}
	if _, err := c.MutatingAdmissionPolicyBindings().Create(Ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *Env) MapNamespace(t *testing.T, label string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Unique("map"), Labels: map[string]string{"map": label}}}
	if _, err := e.Clientset.CoreV1().Namespaces().Create(Ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// MapOf is a mutating policy on the creates of resource (core or apps) in
// namespaces labeled map=label, limited to names with prefix by a match
// condition, with the given mutations.
func MapOf(name, label, group, resource, prefix string, mutations ...arv1.Mutation) *arv1.MutatingAdmissionPolicy {
	return &arv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: arv1.MutatingAdmissionPolicySpec{
		MatchConstraints: &arv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"map": label}},
			ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create},
				Rule:       arv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}}}}}},
		MatchConditions:    []arv1.MatchCondition{{Name: "prefix", Expression: `object.metadata.name.startsWith("` + prefix + `")`}},
		Mutations:          mutations,
		ReinvocationPolicy: arv1.NeverReinvocationPolicy,
	}}
}

// JSONPatchOf is a JSONPatch mutation of expression.
func JSONPatchOf(expression string) arv1.Mutation {
	return arv1.Mutation{PatchType: arv1.PatchTypeJSONPatch, JSONPatch: &arv1.JSONPatch{Expression: expression}}
}
