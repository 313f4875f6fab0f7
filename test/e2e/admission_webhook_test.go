package e2e

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// admissionWebhook is an HTTPS webhook server in the test process. Each
// path answers with its own function; every review it gets is kept.
type admissionWebhook struct {
	srv      *httptest.Server
	caBundle []byte

	mu      sync.Mutex
	answers map[string]func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview)
	reviews map[string][]*admissionv1.AdmissionReview
}

func newAdmissionWebhook(t *testing.T) *admissionWebhook {
	wh := &admissionWebhook{answers: map[string]func(http.ResponseWriter, *http.Request, *admissionv1.AdmissionReview){},
		reviews: map[string][]*admissionv1.AdmissionReview{}}
	wh.srv = httptest.NewUnstartedServer(http.HandlerFunc(wh.serve))
	wh.srv.EnableHTTP2 = true
	wh.srv.StartTLS()
	t.Cleanup(wh.srv.Close)
	wh.caBundle = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: wh.srv.Certificate().Raw})
	return wh
}

func (wh *admissionWebhook) serve(w http.ResponseWriter, r *http.Request) {
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
		allow(w, &review, nil)
		return
	}
	answer(w, r, &review)
}

func (wh *admissionWebhook) handle(path string, f func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview)) string {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	wh.answers[path] = f
	return wh.srv.URL + path
}

func (wh *admissionWebhook) seen(path string) []*admissionv1.AdmissionReview {
	wh.mu.Lock()
	defer wh.mu.Unlock()
	return append([]*admissionv1.AdmissionReview(nil), wh.reviews[path]...)
}

// allow answers the review, with resp's fields when given.
func allow(w http.ResponseWriter, review *admissionv1.AdmissionReview, resp *admissionv1.AdmissionResponse) {
	if resp == nil {
		resp = &admissionv1.AdmissionResponse{Allowed: true}
	}
	resp.UID = review.Request.UID
	writeJSON(w, &admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
}

// configMapRules selects the creates and updates of config maps.
var configMapRules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create, arv1.Update},
	Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}

func validatingHook(name, url string, ca []byte, nsLabel string) arv1.ValidatingWebhook {
	return arv1.ValidatingWebhook{Name: name, SideEffects: ptr.To(arv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		ClientConfig: arv1.WebhookClientConfig{URL: &url, CABundle: ca}, Rules: configMapRules,
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": nsLabel}}}
}

// labeledNamespace makes a namespace the webhooks of label select.
func (e *env) labeledNamespace(t *testing.T, label string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unique("wh"), Labels: map[string]string{"webhooks": label}}}
	if _, err := e.c.CoreV1().Namespaces().Create(ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// waitCalled creates probe config maps in ns until the webhook at path has
// seen one: the configuration is then in force.
func waitCalled(t *testing.T, e *env, wh *admissionWebhook, path, ns string) {
	t.Helper()
	eventually(t, 30*time.Second, "webhook "+path+" called", func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}
		_, _ = e.c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return len(wh.seen(path)) > 0, nil
	})
}

func TestAdmissionWebhooks(t *testing.T) {
	e := start(t)
	wh := newAdmissionWebhook(t)
	ns := e.labeledNamespace(t, "on")
	other := e.labeledNamespace(t, "off")

	mutateURL := wh.handle("/mutate", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		patch := `[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`
		allow(w, review, &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)})
	})
	validateURL := wh.handle("/validate", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		var cm corev1.ConfigMap
		_ = json.Unmarshal(review.Request.Object.Raw, &cm)
		if _, ok := cm.Data["deny"]; ok {
			allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "deny is not allowed", Code: http.StatusForbidden}})
			return
		}
		allow(w, review, &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"seen by the validating webhook"}})
	})
	mh := validatingHook("m.example.com", mutateURL, wh.caBundle, "on")
	mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: unique("mwc")}, Webhooks: []arv1.MutatingWebhook{{
		Name: mh.Name, SideEffects: mh.SideEffects, AdmissionReviewVersions: []string{"v1beta1", "v1"}, ClientConfig: mh.ClientConfig,
		Rules: mh.Rules, NamespaceSelector: mh.NamespaceSelector}}}
	if _, err := e.c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx(t), mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: unique("vwc")},
		Webhooks: []arv1.ValidatingWebhook{validatingHook("v.example.com", validateURL, wh.caBundle, "on")}}
	if _, err := e.c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCalled(t, e, wh, "/validate", ns)
	waitCalled(t, e, wh, "/mutate", ns)

	// Mutated in order, validated, warned.
	var warns warnings
	c := e.clientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = &warns })
	cm, err := c.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["mutated"] != "yes" || !strings.Contains(warns.joined(), "seen by the validating webhook") {
		t.Errorf("created %v, warnings %q", cm.Labels, warns.joined())
	}
	reviews := wh.seen("/validate")
	last := reviews[len(reviews)-1].Request
	if last.Name != "a" || last.Namespace != ns || last.Operation != admissionv1.Create || last.UserInfo.Username == "" ||
		last.Kind.Kind != "ConfigMap" || !strings.Contains(string(last.Object.Raw), `"mutated":"yes"`) ||
		!strings.Contains(string(last.Options.Raw), `"kind":"CreateOptions"`) {
		t.Errorf("validating review: %+v", last)
	}
	if got := wh.seen("/mutate"); got[len(got)-1].APIVersion != "admission.k8s.io/v1beta1" {
		t.Errorf("mutating review version %q, want the first the webhook lists", got[len(got)-1].APIVersion)
	}

	// Refused: kube's message, nothing stored.
	deny := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "denied"}, Data: map[string]string{"deny": "1"}}
	_, err = e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), deny, metav1.CreateOptions{})
	wantStatus(t, err, http.StatusForbidden, "", `admission webhook "v.example.com" denied the request: deny is not allowed`)
	if _, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx(t), "denied", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused object stored: %v", err)
	}
	// An update is sent with the old object.
	cm.Data = map[string]string{"deny": "1"}
	_, err = e.c.CoreV1().ConfigMaps(ns).Update(ctx(t), cm, metav1.UpdateOptions{})
	wantStatus(t, err, http.StatusForbidden, "", `admission webhook "v.example.com" denied the request: deny is not allowed`)
	reviews = wh.seen("/validate")
	if r := reviews[len(reviews)-1].Request; r.Operation != admissionv1.Update || len(r.OldObject.Raw) == 0 {
		t.Errorf("update review: %+v", r)
	}
	// Dry run reaches webhooks without side effects, marked.
	dry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}
	if _, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), dry, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	reviews = wh.seen("/validate")
	if r := reviews[len(reviews)-1].Request; r.Name != "dry" || r.DryRun == nil || !*r.DryRun {
		t.Errorf("dry-run review: %+v", r)
	}
	// The namespace selector keeps other namespaces out.
	n := len(wh.seen("/validate"))
	if cm, err := e.c.CoreV1().ConfigMaps(other).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil || cm.Labels["mutated"] != "" {
		t.Errorf("unselected namespace: %v %v", cm, err)
	}
	if len(wh.seen("/validate")) != n {
		t.Errorf("webhook called for an unselected namespace")
	}
	// A delete is sent with the stored object and the delete's options.
	delURL := wh.handle("/delete", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "kept"}})
	})
	del := validatingHook("del.example.com", delURL, wh.caBundle, "on")
	del.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Delete}, Rule: configMapRules[0].Rule}}
	delConfig := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: unique("del")}, Webhooks: []arv1.ValidatingWebhook{del}}
	if _, err := e.c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx(t), delConfig, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "delete webhook in force", func(ctx context.Context) (bool, error) {
		// A delete before the webhook is in force goes through: "a" is
		// made again for the next try.
		if _, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return false, err
		}
		err := e.c.CoreV1().ConfigMaps(ns).Delete(ctx, "a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](7)})
		return err != nil && strings.Contains(err.Error(), "kept"), nil
	})
	if got, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx(t), "a", metav1.GetOptions{}); err != nil || got.Name != "a" {
		t.Errorf("refused delete deleted: %v", err)
	}
	dels := wh.seen("/delete")
	if r := dels[len(dels)-1].Request; r.Operation != admissionv1.Delete || r.Name != "a" || !strings.Contains(string(r.OldObject.Raw), `"name":"a"`) ||
		len(r.Object.Raw) != 0 || !strings.Contains(string(r.Options.Raw), `"gracePeriodSeconds":7`) {
		t.Errorf("delete review: %+v\noptions %s", r, r.Options.Raw)
	}
	if err := e.c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx(t), delConfig.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// Webhook configurations themselves are never sent to webhooks.
	all := validatingHook("all.example.com", validateURL, wh.caBundle, "on")
	all.NamespaceSelector = nil
	all.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.OperationAll},
		Rule: arv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}}}
	vwc2 := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: unique("all")}, Webhooks: []arv1.ValidatingWebhook{all}}
	if _, err := e.c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx(t), vwc2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCalled(t, e, wh, "/validate", ns)
	before := len(wh.seen("/validate"))
	if err := e.c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx(t), vwc2.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range wh.seen("/validate")[before:] {
		if r.Request.Resource.Group == arv1.GroupName {
			t.Errorf("webhook configuration sent to a webhook: %+v", r.Request)
		}
	}
}
