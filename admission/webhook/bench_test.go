package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
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

// BenchmarkWebhookCall admits one config map create through the load
// tool's two webhooks (loadtest/admission.go), a mutating one that labels
// it and a validating one that allows it, served over HTTPS (HTTP/2) in
// this process: matching, the AdmissionReview encoded, the call on a kept
// connection, the answer decoded and the patch applied. cpu-ns/op is the
// CPU of both ends.
func BenchmarkWebhookCall(b *testing.B) {
	patch := []byte(`[{"op":"add","path":"/metadata/labels/capstan-load-mutated","value":"true"}]`)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if r.URL.Path == "/mutate" {
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = patch, &pt
		}
		review.Request, review.Response = nil, resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	none := arv1.SideEffectClassNone
	rules := []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create},
		Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "yes"}}
	client := func(path string) arv1.WebhookClientConfig {
		url := srv.URL + path
		return arv1.WebhookClientConfig{URL: &url, CABundle: ca}
	}
	mutating := NewSource(true, nil, nil)
	mutating.rebuild(mutatingConfigs([]*arv1.MutatingWebhookConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "m", UID: "m", ResourceVersion: "1"},
		Webhooks: []arv1.MutatingWebhook{{Name: "label.example.com", ClientConfig: client("/mutate"), Rules: rules,
			NamespaceSelector: sel, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}}))
	close(mutating.synced)
	validating := NewSource(false, nil, nil)
	validating.rebuild(validatingConfigs([]*arv1.ValidatingWebhookConfiguration{{ObjectMeta: metav1.ObjectMeta{Name: "v", UID: "v", ResourceVersion: "1"},
		Webhooks: []arv1.ValidatingWebhook{{Name: "allow.example.com", ClientConfig: client("/validate"), Rules: rules,
			NamespaceSelector: sel, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}}))
	close(validating.synced)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{"bench": "yes"}}}
	namespaces := func(context.Context, string) (*corev1.Namespace, error) { return ns.DeepCopy(), nil }
	chain := admission.Chain{NewMutating(mutating, namespaces, authz.AlwaysAllow), NewValidating(validating, namespaces, authz.AlwaysAllow)}
	ctx := authn.WithUser(context.Background(), &authn.User{Name: "admin", Groups: []string{"system:masters", "system:authenticated"}})
	admit := func() {
		a := &admission.Attributes{Operation: admission.Create, Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
			Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "bench", Name: "adm-1",
			Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "adm-1", Namespace: "bench", Labels: map[string]string{"capstan-load": "true"}},
				Data: map[string]string{"payload": strings.Repeat("x", 256)}}, Options: &metav1.CreateOptions{}}
		if err := chain.Admit(ctx, a); err != nil {
			b.Fatal(err)
		}
		if err := chain.Validate(ctx, a); err != nil {
			b.Fatal(err)
		}
		if a.Object.(*corev1.ConfigMap).Labels["capstan-load-mutated"] != "true" {
			b.Fatalf("not mutated: %v", a.Object)
		}
	}
	admit()
	b.ReportAllocs()
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for b.Loop() {
		admit()
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}
