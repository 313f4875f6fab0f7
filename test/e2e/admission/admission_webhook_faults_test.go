package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestAdmissionWebhookFaults: a webhook that cannot answer properly gets
// kube's answer for its failure policy, and nothing is stored on a
// refusal.
func TestAdmissionWebhookFaults(t *testing.T) {
	e := e2eutil.Start(t)
	wh := e2eutil.NewAdmissionWebhook(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "https://" + closed.Addr().String() + "/refused"
	closed.Close()

	tests := []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview)
		url    string // instead of the webhook's
		ca     []byte // instead of the webhook's
		want   string // in the message of the refusal (failurePolicy Fail)
	}{
		{name: "timeout", answer: func(w http.ResponseWriter, r *http.Request, _ *admissionv1.AdmissionReview) { <-r.Context().Done() },
			want: `/timeout?timeout=1s": context deadline exceeded`},
		{name: "refused", url: refusedURL, want: "connect: connection refused"},
		{name: "certificate", ca: selfSignedCA(t), want: "tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		{name: "garbage", answer: func(w http.ResponseWriter, _ *http.Request, _ *admissionv1.AdmissionReview) { fmt.Fprint(w, "<html>") },
			want: "received invalid webhook response: invalid character '<'"},
		{name: "uid", answer: func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
			e2eutil.WriteJSON(w, &admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: &admissionv1.AdmissionResponse{UID: "other", Allowed: true}})
		}, want: `received invalid webhook response: expected response.uid="`},
		{name: "callback", answer: func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
			// A webhook that reads from capstan while capstan waits for it.
			_, err := e.Clientset.CoreV1().Namespaces().Get(r.Context(), review.Request.Namespace, metav1.GetOptions{})
			e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Allowed: err == nil, Result: &metav1.Status{Message: fmt.Sprint(err)}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := wh.Handle("/"+tc.name, tc.answer)
			if tc.url != "" {
				url = tc.url
			}
			ca := wh.CABundle
			if tc.ca != nil {
				ca = tc.ca
			}
			for _, policy := range []arv1.FailurePolicyType{arv1.Fail, arv1.Ignore} {
				ns := e.LabeledNamespace(t, tc.name+"-"+strings.ToLower(string(policy)))
				h := e2eutil.ValidatingHook(tc.name+".example.com", url, ca, tc.name+"-"+strings.ToLower(string(policy)))
				h.FailurePolicy, h.TimeoutSeconds, h.MatchConditions = &policy, ptr.To[int32](1), notMarker
				vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique(tc.name)}, Webhooks: []arv1.ValidatingWebhook{h}}
				if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				waitInForce(t, e, wh, tc.name+"-"+strings.ToLower(string(policy)))
				_, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
				if tc.want == "" || policy == arv1.Ignore {
					if err != nil {
						t.Errorf("%s: %v", policy, err)
					}
					continue
				}
				s := e2eutil.WantStatus(t, err, http.StatusInternalServerError, metav1.StatusReasonInternalError, "")
				prefix := fmt.Sprintf(`Internal error occurred: failed calling webhook "%s.example.com": `, tc.name)
				if !strings.HasPrefix(s.Message, prefix) || !strings.Contains(s.Message, tc.want) {
					t.Errorf("message %q, want %q ... %q", s.Message, prefix, tc.want)
				}
				if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "x", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("refused object stored: %v", err)
				}
			}
		})
	}
}

// selfSignedCA is a CA that signed nothing the test servers present
// (httptest's servers share one certificate).
func selfSignedCA(t *testing.T) []byte {
	ca, _ := e2eutil.ServingCert(t, "unused")
	return ca
}

// notMarker keeps a fault's webhook from the marker's config maps, and from
// the kube-root-ca.crt config map the root-ca-cert-publisher puts in every
// new namespace.
var notMarker = []arv1.MatchCondition{{Name: "not-marker", Expression: `!object.metadata.name.startsWith("marker") && object.metadata.name != "kube-root-ca.crt"`}}

// waitInForce makes a marker configuration that refuses config maps
// named marker-* in ns's label and waits until it refuses one: the
// configurations are seen in the order they were written, so those made
// before it are in force too.
func waitInForce(t *testing.T, e *e2eutil.Env, wh *e2eutil.AdmissionWebhook, label string) {
	t.Helper()
	url := wh.Handle("/marker", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "marker"}})
	})
	h := e2eutil.ValidatingHook("marker.example.com", url, wh.CABundle, label)
	h.MatchConditions = []arv1.MatchCondition{{Name: "marker", Expression: `object.metadata.name.startsWith("marker")`}}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("marker")}, Webhooks: []arv1.ValidatingWebhook{h}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := e.LabeledNamespace(t, label)
	e2eutil.Eventually(t, 30*time.Second, "marker webhook in force", func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "marker-"}}
		_, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return err != nil && strings.Contains(err.Error(), "marker"), nil
	})
}

// TestAdmissionWebhookPatches: patches of what a webhook may not change
// get kube's answers: a create's name is the patched one (kube names the
// object after admission), its namespace must stay the request's, its uid
// is the server's; an update may not rename; a patch past an object's
// size limit is refused by its validation. Nothing is stored on refusal.
func TestAdmissionWebhookPatches(t *testing.T) {
	e := e2eutil.Start(t)
	wh := e2eutil.NewAdmissionWebhook(t)
	tests := []struct {
		name, patch string
		update      bool
		check       func(t *testing.T, cm *corev1.ConfigMap, err error)
	}{
		{name: "name", patch: `[{"op":"replace","path":"/metadata/name","value":"renamed"}]`, check: func(t *testing.T, cm *corev1.ConfigMap, err error) {
			if err != nil || cm.Name != "renamed" {
				t.Errorf("renamed create: %v %v", cm, err)
			}
		}},
		{name: "namespace", patch: `[{"op":"replace","path":"/metadata/namespace","value":"default"}]`, check: func(t *testing.T, _ *corev1.ConfigMap, err error) {
			e2eutil.WantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "the namespace of the provided object does not match the namespace sent on the request")
		}},
		{name: "uid", patch: `[{"op":"add","path":"/metadata/uid","value":"1234"}]`, check: func(t *testing.T, cm *corev1.ConfigMap, err error) {
			if err != nil || cm.UID == "1234" || cm.UID == "" {
				t.Errorf("uid create: %v %v", cm, err)
			}
		}},
		{name: "rename", update: true, patch: `[{"op":"replace","path":"/metadata/name","value":"renamed"}]`, check: func(t *testing.T, _ *corev1.ConfigMap, err error) {
			s := e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
			if !strings.Contains(s.Message, "field is immutable") {
				t.Errorf("message %q", s.Message)
			}
		}},
		{name: "big", patch: `[{"op":"add","path":"/data","value":{"big":"` + strings.Repeat("x", 2<<20) + `"}}]`, check: func(t *testing.T, _ *corev1.ConfigMap, err error) {
			e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, `ConfigMap "x" is invalid: []: Too long: may not be more than 1048576 bytes`)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops := []arv1.OperationType{arv1.Create}
			if tc.update {
				ops = []arv1.OperationType{arv1.Update}
			}
			url := wh.Handle("/patch-"+tc.name, func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
				e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(tc.patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)})
			})
			label := "patch-" + tc.name
			mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique(label)}, Webhooks: []arv1.MutatingWebhook{{
				Name: tc.name + ".example.com", SideEffects: ptr.To(arv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
				ClientConfig: arv1.WebhookClientConfig{URL: &url, CABundle: wh.CABundle}, MatchConditions: notMarker,
				Rules:             []arv1.RuleWithOperations{{Operations: ops, Rule: e2eutil.ConfigMapRules[0].Rule}},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": label}}}}}
			if _, err := e.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(e2eutil.Ctx(t), mwc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitInForce(t, e, wh, label)
			ns := e.LabeledNamespace(t, label)
			cms := e.Clientset.CoreV1().ConfigMaps(ns)
			cm, err := cms.Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			if tc.update {
				if err != nil {
					t.Fatal(err)
				}
				cm.Labels = map[string]string{"changed": "yes"}
				cm, err = cms.Update(e2eutil.Ctx(t), cm, metav1.UpdateOptions{})
			}
			tc.check(t, cm, err)
			if err == nil {
				return
			}
			if got, err := cms.Get(e2eutil.Ctx(t), "x", metav1.GetOptions{}); tc.update && (err != nil || got.Labels["changed"] != "") || !tc.update && !apierrors.IsNotFound(err) {
				t.Errorf("refused write stored: %v %v", got, err)
			}
		})
	}
}
