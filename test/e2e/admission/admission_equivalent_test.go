package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// equivGadgetCRD serves equiv.example.com gadgets at v1 (stored) and v2,
// converted by the None strategy.
const equivGadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.equiv.example.com
spec:
  group: equiv.example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}, tag: {type: string}}}
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}, tag: {type: string}}}
`

// hookFor is a webhook of the create of group/version resource in
// namespaces labeled webhooks=label, with matchPolicy policy.
func hookFor(name, url string, ca []byte, label, group, version, resource string, policy arv1.MatchPolicyType) arv1.ValidatingWebhook {
	h := e2eutil.ValidatingHook(name, url, ca, label)
	h.MatchPolicy = &policy
	h.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create},
		Rule: arv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}}}}
	return h
}

func mutatingOf(h arv1.ValidatingWebhook) arv1.MutatingWebhook {
	return arv1.MutatingWebhook{Name: h.Name, SideEffects: h.SideEffects, AdmissionReviewVersions: h.AdmissionReviewVersions,
		ClientConfig: h.ClientConfig, Rules: h.Rules, NamespaceSelector: h.NamespaceSelector, MatchPolicy: h.MatchPolicy}
}

func patchAnswer(patch string) func(http.ResponseWriter, *http.Request, *admissionv1.AdmissionReview) {
	return func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)})
	}
}

func wantVersions(t *testing.T, r *admissionv1.AdmissionRequest, kind, requestKind schema.GroupVersionKind, apiVersion string) {
	t.Helper()
	var obj metav1.TypeMeta
	_ = json.Unmarshal(r.Object.Raw, &obj)
	if schema.GroupVersionKind(r.Kind) != kind || r.RequestKind == nil || schema.GroupVersionKind(*r.RequestKind) != requestKind ||
		r.Resource.Version != kind.Version || r.RequestResource == nil || r.RequestResource.Version != requestKind.Version ||
		obj.APIVersion != apiVersion {
		t.Errorf("review kind %v (request %v), resource %v (request %v), object %s; want kind %v, request %v, object at %s",
			r.Kind, r.RequestKind, r.Resource, r.RequestResource, obj.APIVersion, kind, requestKind, apiVersion)
	}
}

// TestAdmissionMatchPolicyEquivalent: webhooks and policies that name one
// version of a resource see writes made at another (matchPolicy
// Equivalent, the default), converted to the version they named: a
// custom resource's other version (the CRD's conversion) and events of
// core/v1 and events.k8s.io/v1 (the built-in conversion). A mutating
// webhook's patch of the converted object reaches the stored one.
// So does a mutating policy's. matchPolicy Exact is not called.
func TestAdmissionMatchPolicyEquivalent(t *testing.T) {
	e := e2eutil.Start(t)
	e.CreateCRD(t, equivGadgetCRD)
	wh := e2eutil.NewAdmissionWebhook(t)
	ns := e.LabeledNamespace(t, "equiv")
	mutateURL := wh.Handle("/mutate-v1", patchAnswer(`[{"op":"add","path":"/spec/tag","value":"patched-at-v1"}]`))
	eventURL := wh.Handle("/mutate-event", patchAnswer(`[{"op":"replace","path":"/note","value":"patched at events.k8s.io"}]`))
	seenURL, exactURL := wh.Server.URL+"/seen-v1", wh.Server.URL+"/exact-v1"
	mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("equiv")}, Webhooks: []arv1.MutatingWebhook{
		mutatingOf(hookFor("m.equiv.example.com", mutateURL, wh.CABundle, "equiv", "equiv.example.com", "v1", "gadgets", arv1.Equivalent)),
		mutatingOf(hookFor("e.equiv.example.com", eventURL, wh.CABundle, "equiv", "events.k8s.io", "v1", "events", arv1.Equivalent)),
	}}
	if _, err := e.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(e2eutil.Ctx(t), mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("equiv")}, Webhooks: []arv1.ValidatingWebhook{
		hookFor("v.equiv.example.com", seenURL, wh.CABundle, "equiv", "equiv.example.com", "v1", "gadgets", arv1.Equivalent),
		hookFor("x.equiv.example.com", exactURL, wh.CABundle, "equiv", "equiv.example.com", "v1", "gadgets", arv1.Exact),
	}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets := e.Dynamic(t).Resource(schema.GroupVersionResource{Group: "equiv.example.com", Version: "v2", Resource: "gadgets"}).Namespace(ns)
	gadget := func(name string, size int64) *unstructured.Unstructured {
		meta := map[string]any{"name": name}
		if name == "" {
			meta = map[string]any{"generateName": "probe-"}
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "equiv.example.com/v2", "kind": "Gadget",
			"metadata": meta, "spec": map[string]any{"size": size}}}
	}
	e2eutil.Eventually(t, 30*time.Second, "webhooks in force", func(ctx context.Context) (bool, error) {
		_, _ = gadgets.Create(ctx, gadget("", 1), metav1.CreateOptions{})
		return len(wh.Seen("/seen-v1")) > 0 && len(wh.Seen("/mutate-v1")) > 0, nil
	})

	// A v2 create reaches the v1 webhooks as v1, and is stored patched.
	got, err := gadgets.Create(e2eutil.Ctx(t), gadget("g", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tag, _, _ := unstructured.NestedString(got.Object, "spec", "tag"); tag != "patched-at-v1" || got.GetAPIVersion() != "equiv.example.com/v2" {
		t.Errorf("created %v", got.Object)
	}
	v1, v2 := schema.GroupVersionKind{Group: "equiv.example.com", Version: "v1", Kind: "Gadget"}, schema.GroupVersionKind{Group: "equiv.example.com", Version: "v2", Kind: "Gadget"}
	wantVersions(t, e2eutil.LastReview(t, wh, "/mutate-v1"), v1, v2, "equiv.example.com/v1")
	seen := e2eutil.LastReview(t, wh, "/seen-v1")
	wantVersions(t, seen, v1, v2, "equiv.example.com/v1")
	if !strings.Contains(string(seen.Object.Raw), "patched-at-v1") {
		t.Errorf("validating webhook saw %s, before the mutation", seen.Object.Raw)
	}
	if n := len(wh.Seen("/exact-v1")); n != 0 {
		t.Errorf("matchPolicy Exact webhook called %d times for v2 writes", n)
	}

	// A policy of v1 gadgets sees a v2 write at v1.
	p := e2eutil.VapOf(e2eutil.Unique("equiv"), "equiv", "", arv1.Validation{Expression: "object.spec.size < 10",
		MessageExpression: `'seen at ' + object.apiVersion + ' as ' + request.kind.version + ', requested as ' + request.requestKind.version`})
	p.Spec.MatchConstraints = &arv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": "equiv"}}, ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
		Operations: []arv1.OperationType{arv1.Create},
		Rule:       arv1.Rule{APIGroups: []string{"equiv.example.com"}, APIVersions: []string{"v1"}, Resources: []string{"gadgets"}}}}}}
	e.Bind(t, p, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{ValidationActions: []arv1.ValidationAction{arv1.Deny}}})
	e2eutil.Eventually(t, 30*time.Second, "policy of v1 gadgets refuses a v2 gadget", func(ctx context.Context) (bool, error) {
		_, err := gadgets.Create(ctx, gadget("", 20), metav1.CreateOptions{})
		if err != nil && strings.Contains(err.Error(), "seen at") {
			if !strings.Contains(err.Error(), "seen at equiv.example.com/v1 as v1, requested as v2") {
				t.Errorf("refusal: %v", err)
			}
			return true, nil
		}
		return false, nil
	})

	// A mutating policy of v1 gadgets changes a v2 write as seen at v1.
	mp := e2eutil.MapOf(e2eutil.Unique("equiv"), "", "equiv.example.com", "gadgets", "m-",
		e2eutil.JSONPatchOf(`[JSONPatch{op: "add", path: "/metadata/annotations", value: {"seen-as": object.apiVersion}}]`))
	mp.Spec.MatchConstraints.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": "equiv"}}
	e.BindMutating(t, mp, nil)
	tries := 0
	e2eutil.Eventually(t, 30*time.Second, "policy of v1 gadgets mutates a v2 gadget", func(ctx context.Context) (bool, error) {
		tries++
		got, err := gadgets.Create(ctx, gadget(fmt.Sprintf("m-%d", tries), 1), metav1.CreateOptions{})
		if err != nil || got.GetAnnotations()["seen-as"] == "" {
			return false, nil
		}
		if a := got.GetAnnotations()["seen-as"]; a != "equiv.example.com/v1" || got.GetAPIVersion() != "equiv.example.com/v2" {
			t.Errorf("mutated as %q, returned at %s", a, got.GetAPIVersion())
		}
		return true, nil
	})

	// A core/v1 event reaches the events.k8s.io/v1 webhook as such, and
	// its patched note is the stored message.
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "ev"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns},
		Reason: "Test", Message: "as written", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "test"},
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1}
	stored, err := e.Clientset.CoreV1().Events(ns).Create(e2eutil.Ctx(t), ev, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stored.Message != "patched at events.k8s.io" {
		t.Errorf("stored event message %q", stored.Message)
	}
	wantVersions(t, e2eutil.LastReview(t, wh, "/mutate-event"), schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"},
		schema.GroupVersionKind{Version: "v1", Kind: "Event"}, "events.k8s.io/v1")
}
