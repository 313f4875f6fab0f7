package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMutatingWebhookDeleteCollection: a deletecollection calls the
// mutating webhooks once per object it deletes, with that object and no
// name, as kube does; a single delete too, with its name.
func TestMutatingWebhookDeleteCollection(t *testing.T) {
	e := e2eutil.Start(t)
	wh := e2eutil.NewAdmissionWebhook(t)
	ns := e.LabeledNamespace(t, "deletes")
	h := e2eutil.ValidatingHook("deletes.example.com", wh.Handle("/deletes", nil), wh.CABundle, "deletes")
	mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("mwc")}, Webhooks: []arv1.MutatingWebhook{{
		Name: h.Name, ClientConfig: h.ClientConfig, NamespaceSelector: h.NamespaceSelector,
		SideEffects: h.SideEffects, AdmissionReviewVersions: h.AdmissionReviewVersions,
		Rules: []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Delete}, Rule: e2eutil.ConfigMapRules[0].Rule}}}}}
	if _, err := e.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(e2eutil.Ctx(t), mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.Eventually(t, 30*time.Second, "delete webhook in force", func(ctx context.Context) (bool, error) {
		name := e2eutil.Unique("probe")
		if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			return false, err
		}
		if err := e.Clientset.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return false, err
		}
		return len(wh.Seen("/deletes")) > 0, nil
	})
	r := wh.Seen("/deletes")[0].Request
	if r.Operation != admissionv1.Delete || r.OldObject.Raw == nil || r.Options.Raw == nil || r.Name == "" {
		t.Errorf("single delete review: %+v", r)
	}
	for _, name := range []string{"one", "two"} {
		e.ConfigMap(t, ns, name, map[string]string{"batch": "yes"})
	}
	before := len(wh.Seen("/deletes"))
	if err := e.Clientset.CoreV1().ConfigMaps(ns).DeleteCollection(e2eutil.Ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=yes"}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rv := range wh.Seen("/deletes")[before:] {
		var cm corev1.ConfigMap
		if err := json.Unmarshal(rv.Request.OldObject.Raw, &cm); err != nil || rv.Request.Operation != admissionv1.Delete {
			t.Fatalf("review %+v: %v", rv.Request, err)
		}
		names = append(names, cm.Name)
		// kube's deletecollection admits each object without a name of
		// its own: the request's, which names none.
		if rv.Request.Name != "" {
			t.Errorf("deletecollection's review of %s names %q, want no name, as kube's", cm.Name, rv.Request.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"one", "two"}) {
		t.Errorf("deletecollection's mutating calls saw %v, want one call per object", names)
	}
}
