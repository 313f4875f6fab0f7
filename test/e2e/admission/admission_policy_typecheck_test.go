package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidatingAdmissionPolicyTypeChecking: the status loop checks a
// policy's expressions against the schemas of the kinds it matches and
// reports kube's warnings for the ones that misread them.
func TestValidatingAdmissionPolicyTypeChecking(t *testing.T) {
	e := e2eutil.Start(t)
	p := &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("typed")}, Spec: arv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
			Operations: []arv1.OperationType{arv1.Create},
			Rule:       arv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
		Variables: []arv1.Variable{{Name: "replicas", Expression: "object.spec.replicas"}},
		Validations: []arv1.Validation{
			{Expression: "variables.replicas > 1", MessageExpression: `"replicas: " + string(variables.replicas)`},
			{Expression: `object.spec.replica > 1`},
			{Expression: "true", MessageExpression: `"x" + object.spec.replicas`},
		}}}
	c := e.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	if _, err := c.Create(e2eutil.Ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *arv1.ValidatingAdmissionPolicy
	e2eutil.Eventually(t, 30*time.Second, "typeChecking in status", func(ctx context.Context) (bool, error) {
		var err error
		got, err = c.Get(ctx, p.Name, metav1.GetOptions{})
		return err == nil && got.Status.ObservedGeneration == got.Generation && got.Status.TypeChecking != nil, err
	})
	warnings := got.Status.TypeChecking.ExpressionWarnings
	want := []arv1.ExpressionWarning{
		{FieldRef: "spec.validations[1].expression", Warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica > 1\n | ...........^\n"},
		{FieldRef: "spec.validations[2].messageExpression", Warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(string, int)'\n | \"x\" + object.spec.replicas\n | ....^\n"},
	}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q, want %q", warnings, want)
	}
	for i := range want {
		if warnings[i] != want[i] {
			t.Errorf("warning %d:\n%q\nwant\n%q", i, warnings[i], want[i])
		}
	}
}
