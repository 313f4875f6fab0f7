package admission

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/test/e2e/e2eutil"
)

// scaledGadgetCRD serves scale.example.com gadgets at v1 (stored) and v2,
// both with a scale subresource.
const scaledGadgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.scale.example.com
spec:
  group: scale.example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {replicas: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}}}
  - name: v2
    served: true
    storage: false
    subresources: {scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {replicas: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}}}
`

// scaleHook is a webhook of the updates of v1 gadgets' scale in
// namespaces labeled webhooks=scale, with matchPolicy policy.
func scaleHook(name, url string, ca []byte, policy arv1.MatchPolicyType) arv1.ValidatingWebhook {
	h := e2eutil.ValidatingHook(name, url, ca, "scale")
	h.MatchPolicy = &policy
	h.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Update},
		Rule: arv1.Rule{APIGroups: []string{"scale.example.com"}, APIVersions: []string{"v1"}, Resources: []string{"gadgets/scale"}}}}
	return h
}

// TestAdmissionMatchPolicyEquivalentScale: a webhook of one version's
// /scale of a custom resource sees a write of another version's scale
// (matchPolicy Equivalent), as kube registers every served version's
// scale as the same autoscaling/v1 Scale: the review names the v1
// resource and the requested v2 one, the Scale as written; a mutating
// webhook's patch of it is what is stored. matchPolicy Exact is not
// called.
func TestAdmissionMatchPolicyEquivalentScale(t *testing.T) {
	e := e2eutil.Start(t)
	e.CreateCRD(t, scaledGadgetCRD)
	wh := e2eutil.NewAdmissionWebhook(t)
	ns := e.LabeledNamespace(t, "scale")
	mutateURL := wh.Handle("/mutate-scale", patchAnswer(`[{"op":"replace","path":"/spec/replicas","value":7}]`))
	seenURL, exactURL := wh.Server.URL+"/seen-scale", wh.Server.URL+"/exact-scale"
	reg := e.Clientset.AdmissionregistrationV1()
	mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("scale")},
		Webhooks: []arv1.MutatingWebhook{mutatingOf(scaleHook("m.scale.example.com", mutateURL, wh.CABundle, arv1.Equivalent))}}
	if _, err := reg.MutatingWebhookConfigurations().Create(e2eutil.Ctx(t), mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("scale")}, Webhooks: []arv1.ValidatingWebhook{
		scaleHook("v.scale.example.com", seenURL, wh.CABundle, arv1.Equivalent),
		scaleHook("x.scale.example.com", exactURL, wh.CABundle, arv1.Exact),
	}}
	if _, err := reg.ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets := e.Dynamic(t).Resource(schema.GroupVersionResource{Group: "scale.example.com", Version: "v2", Resource: "gadgets"}).Namespace(ns)
	g := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scale.example.com/v2", "kind": "Gadget",
		"metadata": map[string]any{"name": "g"}, "spec": map[string]any{"replicas": int64(1)}}}
	if _, err := gadgets.Create(e2eutil.Ctx(t), g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scaleTo := func(ctx context.Context, replicas int) (*unstructured.Unstructured, error) {
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": replicas}})
		return gadgets.Patch(ctx, "g", types.MergePatchType, patch, metav1.PatchOptions{}, "scale")
	}
	e2eutil.Eventually(t, 30*time.Second, "webhooks of v1 scale in force", func(ctx context.Context) (bool, error) {
		_, _ = scaleTo(ctx, 2)
		return len(wh.Seen("/seen-scale")) > 0 && len(wh.Seen("/mutate-scale")) > 0, nil
	})

	// A v2 scale write reaches the v1 webhooks, and is stored patched.
	got, err := scaleTo(e2eutil.Ctx(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 7 || got.GetKind() != "Scale" {
		t.Errorf("scaled: %v", got.Object)
	}
	stored, err := gadgets.Get(e2eutil.Ctx(t), "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(stored.Object, "spec", "replicas"); r != 7 {
		t.Errorf("stored gadget: %v", stored.Object)
	}
	for _, path := range []string{"/mutate-scale", "/seen-scale"} {
		wantScaleReview(t, e2eutil.LastReview(t, wh, path))
	}
	if n := len(wh.Seen("/exact-scale")); n != 0 {
		t.Errorf("matchPolicy Exact webhook called %d times for v2 scale writes", n)
	}
}

// wantScaleReview: the review of a v2 scale write to a webhook of v1's.
func wantScaleReview(t *testing.T, r *admissionv1.AdmissionRequest) {
	t.Helper()
	scale := metav1.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	v1 := metav1.GroupVersionResource{Group: "scale.example.com", Version: "v1", Resource: "gadgets"}
	v2 := metav1.GroupVersionResource{Group: "scale.example.com", Version: "v2", Resource: "gadgets"}
	var obj metav1.TypeMeta
	_ = json.Unmarshal(r.Object.Raw, &obj)
	if r.Kind != scale || r.RequestKind == nil || *r.RequestKind != scale || r.Resource != v1 ||
		r.RequestResource == nil || *r.RequestResource != v2 || r.SubResource != "scale" || r.RequestSubResource != "scale" ||
		obj.APIVersion != "autoscaling/v1" || obj.Kind != "Scale" {
		t.Errorf("review kind %v (request %v), resource %v (request %v), subresource %q (request %q), object %v; want a Scale of %v requested at %v",
			r.Kind, r.RequestKind, r.Resource, r.RequestResource, r.SubResource, r.RequestSubResource, obj, v1, v2)
	}
}
