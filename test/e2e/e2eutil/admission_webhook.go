package e2eutil

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// AdmissionWebhook is an HTTPS webhook server in the test process. Each
// path answers with its own function; every review it gets is kept.
type AdmissionWebhook struct {
	Server   *httptest.Server
	CABundle []byte

	mu      sync.Mutex
	answers map[string]func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview)
	reviews map[string][]*admissionv1.AdmissionReview
}

func NewAdmissionWebhook(t *testing.T) *AdmissionWebhook {
	wh := &AdmissionWebhook{answers: map[string]func(http.ResponseWriter, *http.Request, *admissionv1.AdmissionReview){},
		reviews: map[string][]*admissionv1.AdmissionReview{}}
	wh.Server = httptest.NewUnstartedServer(http.HandlerFunc(wh.serve))
	wh.Server.EnableHTTP2 = true
	wh.Server.StartTLS()
	t.Cleanup(wh.Server.Close)
	wh.CABundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: wh.Server.Certificate().Raw})
	return wh
}

func (wh *AdmissionWebhook) serve(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	wh.mu.Lock()
	wh.reviews[r.URL.Path] = append(wh.reviews[r.URL.Path], &review)
	answer := wh.answers[r.URL.Path]
	wh.mu.Unlock()
	if answer == nil {
		Allow(w, &review, nil)
		return
	}
	answer(w, r, &review)
}

func (wh *AdmissionWebhook) Handle(path string, f func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview)) string {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	wh.answers[path] = f
	return wh.Server.URL + path
}

func (wh *AdmissionWebhook) Seen(path string) []*admissionv1.AdmissionReview {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	return append([]*admissionv1.AdmissionReview(nil), wh.reviews[path]...)
}

// Allow answers the review, with resp's fields when given.
func Allow(w http.ResponseWriter, review *admissionv1.AdmissionReview, resp *admissionv1.AdmissionResponse) {
	if resp == nil {
		resp = &admissionv1.AdmissionResponse{Allowed: true}
	}
	resp.UID = review.Request.UID
	WriteJSON(w, &admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
}

// ConfigMapRules selects the creates and updates of config maps.
var ConfigMapRules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create, arv1.Update},
	Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}

func ValidatingHook(name, url string, ca []byte, nsLabel string) arv1.ValidatingWebhook {
	return arv1.ValidatingWebhook{Name: name, SideEffects: ptr.To(arv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		ClientConfig: arv1.WebhookClientConfig{URL: &url, CABundle: ca}, Rules: ConfigMapRules,
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": nsLabel}}}
}

// LabeledNamespace makes a namespace the webhooks of label select.
func (e *Env) LabeledNamespace(t *testing.T, label string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Unique("wh"), Labels: map[string]string{"webhooks": label}}}
	if _, err := e.Clientset.CoreV1().Namespaces().Create(Ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// WaitCalled creates probe config maps in ns until the webhook at path has
// seen one: the configuration is then in force.
func WaitCalled(t *testing.T, e *Env, wh *AdmissionWebhook, path, ns string) {
	t.Helper()
	Eventually(t, 30*time.Second, "webhook "+path+" called", func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}
		_, _ = e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return len(wh.Seen(path)) > 0, nil
	})
}
