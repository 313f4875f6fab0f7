package webhook

import (
	"fmt"
	"runtime"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkWebhookMemory reports the live heap one compiled webhook (rules,
// selectors, a match condition, its own client) holds: live-B/webhook.
func BenchmarkWebhookMemory(b *testing.B) {
	const n = 200
	none := arv1.SideEffectClassNone
	spec := func(i int) spec {
		url := fmt.Sprintf("https://hook-%d.example.com/validate", i)
		return spec{name: fmt.Sprintf("h%d.example.com", i), clientConfig: arv1.WebhookClientConfig{URL: &url},
			rules: []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create},
				Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			namespaceSel: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, sideEffects: &none,
			reviewVersions:  []string{"v1"},
			matchConditions: []arv1.MatchCondition{{Name: "not-system", Expression: `!request.userInfo.username.startsWith("system:")`}}}
	}
	compileHook("warm", spec(-1), newClients(nil, nil))
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cs := newClients(nil, nil)
		kept := make([]*hook, n)
		for i := range kept {
			kept[i] = compileHook("c", spec(i), cs)
			if kept[i].broken != nil {
				b.Fatal(kept[i].broken)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "live-B/webhook")
		runtime.KeepAlive(kept)
		runtime.KeepAlive(cs)
	}
}
