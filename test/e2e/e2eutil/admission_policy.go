package e2eutil

import (
	"fmt"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VapOf is a policy on the creates of config maps in namespaces labeled
// vap=label, limited to names with prefix by a match condition.
func VapOf(name, label, prefix string, validations ...arv1.Validation) *arv1.ValidatingAdmissionPolicy {
	return &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: arv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &arv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"vap": label}},
			ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create, arv1.Update},
				Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
		MatchConditions: []arv1.MatchCondition{{Name: "prefix", Expression: fmt.Sprintf("object.metadata.name.startsWith(%q)", prefix)}},
		Validations:     validations,
	}}
}

func (e *Env) VapNamespace(t *testing.T, label string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Unique("vap"), Labels: map[string]string{"vap": label}}}
	if _, err := e.Clientset.CoreV1().Namespaces().Create(Ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func (e *Env) Bind(t *testing.T, p *arv1.ValidatingAdmissionPolicy, b *arv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	c := e.Clientset.AdmissionregistrationV1()
	if _, err := c.ValidatingAdmissionPolicies().Create(Ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if b.Name == "" {
		b.Name = p.Name
	}
	b.Spec.PolicyName = p.Name
	if _, err := c.ValidatingAdmissionPolicyBindings().Create(Ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
