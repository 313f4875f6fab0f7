package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"net/http"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func TestAdmissionWebhooks(t *testing.T) {
	e := e2eutil.Start(t)
	wh := e2eutil.NewAdmissionWebhook(t)
	ns := e.LabeledNamespace(t, "on")
	other := e.LabeledNamespace(t, "off")

	mutateURL := wh.Handle("/mutate", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		patch := `[{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}]`
		e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)})
	})
	validateURL := wh.Handle("/validate", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		var cm corev1.ConfigMap
		_ = json.Unmarshal(review.Request.Object.Raw, &cm)
		if _, ok := cm.Data["deny"]; ok {
			e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "deny is not allowed", Code: http.StatusForbidden}})
			return
		}
		e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"seen by the validating webhook"}})
	})
	mh := e2eutil.ValidatingHook("m.example.com", mutateURL, wh.CABundle, "on")
	mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("mwc")}, Webhooks: []arv1.MutatingWebhook{{
		Name: mh.Name, SideEffects: mh.SideEffects, AdmissionReviewVersions: []string{"v1beta1", "v1"}, ClientConfig: mh.ClientConfig,
		Rules: mh.Rules, NamespaceSelector: mh.NamespaceSelector}}}
	if _, err := e.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(e2eutil.Ctx(t), mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("vwc")},
		Webhooks: []arv1.ValidatingWebhook{e2eutil.ValidatingHook("v.example.com", validateURL, wh.CABundle, "on")}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.WaitCalled(t, e, wh, "/validate", ns)
	e2eutil.WaitCalled(t, e, wh, "/mutate", ns)

	// Mutated in order, validated, warned.
	var warns e2eutil.Warnings
	c := e.ClientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = &warns })
	cm, err := c.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["mutated"] != "yes" || !strings.Contains(warns.Joined(), "seen by the validating webhook") {
		t.Errorf("created %v, warnings %q", cm.Labels, warns.Joined())
	}
	reviews := wh.Seen("/validate")
	last := reviews[len(reviews)-1].Request
	if last.Name != "a" || last.Namespace != ns || last.Operation != admissionv1.Create || last.UserInfo.Username == "" ||
		last.Kind.Kind != "ConfigMap" || !strings.Contains(string(last.Object.Raw), `"mutated":"yes"`) ||
		!strings.Contains(string(last.Options.Raw), `"kind":"CreateOptions"`) {
		t.Errorf("validating review: %+v", last)
	}
	if got := wh.Seen("/mutate"); got[len(got)-1].APIVersion != "admission.k8s.io/v1beta1" {
		t.Errorf("mutating review version %q, want the first the webhook lists", got[len(got)-1].APIVersion)
	}

	// Refused: kube's message, nothing stored.
	deny := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "denied"}, Data: map[string]string{"deny": "1"}}
	_, err = e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), deny, metav1.CreateOptions{})
	e2eutil.WantStatus(t, err, http.StatusForbidden, "", `admission webhook "v.example.com" denied the request: deny is not allowed`)
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "denied", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused object stored: %v", err)
	}
	// An update is sent with the old object.
	cm.Data = map[string]string{"deny": "1"}
	_, err = e.Clientset.CoreV1().ConfigMaps(ns).Update(e2eutil.Ctx(t), cm, metav1.UpdateOptions{})
	e2eutil.WantStatus(t, err, http.StatusForbidden, "", `admission webhook "v.example.com" denied the request: deny is not allowed`)
	reviews = wh.Seen("/validate")
	if r := reviews[len(reviews)-1].Request; r.Operation != admissionv1.Update || len(r.OldObject.Raw) == 0 {
		t.Errorf("update review: %+v", r)
	}
	// Dry run reaches webhooks without side effects, marked.
	dry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), dry, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	reviews = wh.Seen("/validate")
	if r := reviews[len(reviews)-1].Request; r.Name != "dry" || r.DryRun == nil || !*r.DryRun {
		t.Errorf("dry-run review: %+v", r)
	}
	// The namespace selector keeps other namespaces out.
	n := len(wh.Seen("/validate"))
	if cm, err := e.Clientset.CoreV1().ConfigMaps(other).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil || cm.Labels["mutated"] != "" {
		t.Errorf("unselected namespace: %v %v", cm, err)
	}
	if len(wh.Seen("/validate")) != n {
		t.Errorf("webhook called for an unselected namespace")
	}
	// A delete is sent with the stored object and the delete's options.
	delURL := wh.Handle("/delete", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "kept"}})
	})
	del := e2eutil.ValidatingHook("del.example.com", delURL, wh.CABundle, "on")
	del.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Delete}, Rule: e2eutil.ConfigMapRules[0].Rule}}
	delConfig := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("del")}, Webhooks: []arv1.ValidatingWebhook{del}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), delConfig, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The configuration comes into force when the webhook source's
	// informer sees it. A delete of "a" cannot probe that: one made before
	// deletes "a". The marker configuration, written after it and seen
	// after it, refuses only its own config maps.
	waitInForce(t, e, wh, "on")
	err = e.Clientset.CoreV1().ConfigMaps(ns).Delete(e2eutil.Ctx(t), "a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](7)})
	if err == nil || !strings.Contains(err.Error(), "kept") {
		t.Fatalf("delete with the webhook in force: %v", err)
	}
	if got, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "a", metav1.GetOptions{}); err != nil || got.Name != "a" {
		t.Errorf("refused delete deleted: %v", err)
	}
	dels := wh.Seen("/delete")
	if r := dels[len(dels)-1].Request; r.Operation != admissionv1.Delete || r.Name != "a" || !strings.Contains(string(r.OldObject.Raw), `"name":"a"`) ||
		len(r.Object.Raw) != 0 || !strings.Contains(string(r.Options.Raw), `"gracePeriodSeconds":7`) {
		t.Errorf("delete review: %+v\noptions %s", r, r.Options.Raw)
	}
	if err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(e2eutil.Ctx(t), delConfig.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// Webhook configurations themselves are never sent to webhooks.
	all := e2eutil.ValidatingHook("all.example.com", validateURL, wh.CABundle, "on")
	all.NamespaceSelector = nil
	all.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.OperationAll},
		Rule: arv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}}}
	vwc2 := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("all")}, Webhooks: []arv1.ValidatingWebhook{all}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.WaitCalled(t, e, wh, "/validate", ns)
	before := len(wh.Seen("/validate"))
	if err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(e2eutil.Ctx(t), vwc2.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range wh.Seen("/validate")[before:] {
		if r.Request.Resource.Group == arv1.GroupName {
			t.Errorf("webhook configuration sent to a webhook: %+v", r.Request)
		}
	}
}
