package validating

import (
	"fmt"
	"runtime"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func benchPolicy(i int) *arv1.ValidatingAdmissionPolicy {
	fail := arv1.Fail
	return &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i)}, Spec: arv1.ValidatingAdmissionPolicySpec{
		FailurePolicy: &fail, ParamKind: &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
		MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
			Operations: []arv1.OperationType{arv1.Create}, Rule: arv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
		Variables: []arv1.Variable{{Name: "replicas", Expression: "object.spec.replicas"}},
		Validations: []arv1.Validation{
			{Expression: "variables.replicas <= int(params.data.max)", MessageExpression: `"too many: " + string(variables.replicas)`},
			{Expression: "object.metadata.name.startsWith('app-')"},
		}}}
}

// BenchmarkPolicyMemory reports the live heap one compiled policy (a
// variable, two validations, a message expression) holds: live-B/policy.
func BenchmarkPolicyMemory(b *testing.B) {
	const n = 200
	compilePolicy(benchPolicy(-1)) // the shared environments, built once
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		kept := make([]*policy, n)
		for i := range kept {
			kept[i] = compilePolicy(benchPolicy(i))
			if kept[i].err != nil {
				b.Fatal(kept[i].err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "live-B/policy")
		runtime.KeepAlive(kept)
	}
}
