package attack

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// TestAdmissionSeesPatchedObject: a policy that forbids a label holds
// against every patch type (JSON patch, merge, strategic merge, apply),
// because admission judges the object as the patch would store it, not
// the patch. It stands for the class of CVE-2021-25735, where admission
// judged an update by the wrong object.
func TestAdmissionSeesPatchedObject(t *testing.T) {
	t.Parallel()
	s := start(t)
	fail := arv1.Fail
	policy := &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "no-forbidden"},
		Spec: arv1.ValidatingAdmissionPolicySpec{FailurePolicy: &fail,
			MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create, arv1.Update},
				Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Validations: []arv1.Validation{{Expression: "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)", Message: "forbidden label"}}}}
	binding := &arv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "no-forbidden"},
		Spec: arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "no-forbidden", ValidationActions: []arv1.ValidationAction{arv1.Deny}}}
	ar := s.client.AdmissionregistrationV1()
	if _, err := ar.ValidatingAdmissionPolicies().Create(ctx(t), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ar.ValidatingAdmissionPolicyBindings().Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy is in force once a create with the label is refused.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Labels: map[string]string{"forbidden": "x"}}}
	err := wait.PollUntilContextTimeout(ctx(t), 100*time.Millisecond, 30*time.Second, true, func(c context.Context) (bool, error) {
		_, err := s.client.CoreV1().ConfigMaps("default").Create(c, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsInvalid(err), nil
	})
	if err != nil {
		t.Fatalf("the policy never refused a create: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target", Labels: map[string]string{"ok": "y"}}}
	if _, err := s.client.CoreV1().ConfigMaps("default").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const path = "/api/v1/namespaces/default/configmaps/target"
	for _, tc := range []struct{ contentType, body string }{
		{"application/json-patch+json", `[{"op":"add","path":"/metadata/labels/forbidden","value":"x"}]`},
		{"application/json-patch+json", `[{"op":"copy","from":"/metadata/labels/ok","path":"/metadata/labels/forbidden"}]`},
		{"application/json-patch+json", `[{"op":"move","from":"/metadata/labels/ok","path":"/metadata/labels/forbidden"}]`},
		{"application/merge-patch+json", `{"metadata":{"labels":{"forbidden":"x"}}}`},
		{"application/strategic-merge-patch+json", `{"metadata":{"labels":{"forbidden":"x"}}}`},
		{"application/strategic-merge-patch+json", `{"metadata":{"$patch":"replace","name":"target","labels":{"forbidden":"x"}}}`},
		{"application/apply-patch+yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: target\n  labels: {forbidden: x}\n"},
	} {
		a := s.do(t, http.MethodPatch, path+"?fieldManager=attacker", tc.contentType, []byte(tc.body))
		if st := a.status(t); a.code != http.StatusUnprocessableEntity || !strings.Contains(st.Message, "forbidden label") {
			t.Errorf("%s %s: %d %.300s, want the policy's 422", tc.contentType, tc.body, a.code, a.body)
		}
	}
	a := s.do(t, http.MethodPatch, "/api/v1/namespaces/default/configmaps/new?fieldManager=attacker", "application/apply-patch+yaml",
		[]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n  labels: {forbidden: x}\n"))
	if a.code != http.StatusUnprocessableEntity {
		t.Errorf("apply that creates: %d %.300s", a.code, a.body)
	}
	got, err := s.client.CoreV1().ConfigMaps("default").Get(ctx(t), "target", metav1.GetOptions{})
	if err != nil || got.Labels["forbidden"] != "" || got.Labels["ok"] != "y" {
		t.Errorf("after the patches: %v %v", got.Labels, err)
	}
}
