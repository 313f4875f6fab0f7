package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/testserver"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.fuzz.example.com}
spec:
  group: fuzz.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations: [{rule: "!has(self.size) || self.size < 100"}]
            properties:
              size: {type: integer}
              tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items: {type: object, required: [name], properties: {name: {type: string}, port: {type: integer}}}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// patchTargets are the objects the fuzzer patches: a config map, a
// deployment (strategic merge keys) and a custom resource (a schema's
// list types, CEL rules, unknown fields).
var patchTargets = []string{
	"/api/v1/namespaces/default/configmaps/cm",
	"/apis/apps/v1/namespaces/default/deployments/d",
	"/apis/fuzz.example.com/v1/namespaces/default/widgets/w",
}

var fuzzPatchTypes = []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType}

// FuzzPatch sends any body as each patch type (JSON patch, merge patch,
// strategic merge patch, server-side apply) to a real server, as a dry
// run: the answer is the patched object or kube's Status error, never a
// 500, and nothing is stored.
func FuzzPatch(f *testing.F) {
	for _, seed := range []struct {
		target, pt uint8
		body       string
	}{
		{0, 0, `[{"op":"add","path":"/data/b","value":"2"},{"op":"test","path":"/data/a","value":"1"}]`},
		{0, 0, `[{"op":"copy","from":"/data","path":"/metadata/labels"},{"op":"move","from":"/data/a","path":"/data/z"}]`},
		{1, 1, `{"spec":{"replicas":null,"template":{"metadata":{"labels":{"x":"y"}}}}}`},
		{1, 2, `{"spec":{"template":{"spec":{"containers":[{"name":"c","$patch":"delete"},{"name":"n","image":"i"}]}}}}`},
		{1, 2, `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"x"}],"containers":[[1]]}}}}`},
		{2, 3, "apiVersion: fuzz.example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  ports: [{name: a, port: 1}, {name: a, port: 2}]\n"},
		{1, 3, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 5\n"},
		{2, 1, `{"spec":{"size":1e400,"tags":["a","a"]}}`},
		{0, 1, `{"metadata":{"name":"other","resourceVersion":"1"}}`},
		{2, 0, `[{"op":"replace","path":"/spec/extra","value":{"a":[{"b":{}}]}}]`},
	} {
		f.Add(seed.target, seed.pt, []byte(seed.body))
	}
	s := testserver.Start(f, testserver.WithCRDs([]byte(widgetCRD)))
	createPatchTargets(f, s.RESTConfig())
	client, err := rest.HTTPClientFor(s.RESTConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, target, pt uint8, body []byte) {
		path := patchTargets[int(target)%len(patchTargets)]
		patchType := fuzzPatchTypes[int(pt)%len(fuzzPatchTypes)]
		req, err := http.NewRequest(http.MethodPatch, s.URL+path+"?dryRun=All&fieldManager=fuzz", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", string(patchType))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		checkPatchAnswer(t, resp.StatusCode, answer, fmt.Sprintf("%s %s %q", patchType, path, body))
	})
	checkUnchanged(f, s.RESTConfig())
}

// checkPatchAnswer: a 200 with an object, or a Status of the response's
// code that is not an internal error.
func checkPatchAnswer(t *testing.T, code int, answer []byte, what string) {
	t.Helper()
	if code == http.StatusOK {
		var obj metav1.PartialObjectMetadata
		if err := json.Unmarshal(answer, &obj); err != nil || obj.Kind == "Status" {
			t.Fatalf("%s: 200 with %q (%v)", what, answer, err)
		}
		return
	}
	var status metav1.Status
	if err := json.Unmarshal(answer, &status); err != nil || status.Kind != "Status" {
		t.Fatalf("%s: %d with a body that is not a Status: %q", what, code, answer)
	}
	if int(status.Code) != code || code >= 500 || code < 400 {
		t.Fatalf("%s: %d %s", what, code, answer)
	}
}

func createPatchTargets(f *testing.F, cfg *rest.Config) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	one := int32(1)
	labels := map[string]string{"app": "d"}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Labels: map[string]string{"l": "v"}}, Data: map[string]string{"a": "1"},
	}, metav1.CreateOptions{}); err != nil {
		f.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}},
	}, metav1.CreateOptions{}); err != nil {
		f.Fatal(err)
	}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "fuzz.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": int64(1), "tags": []any{"a"},
			"ports": []any{map[string]any{"name": "a", "port": int64(1)}}}}}
	if _, err := dynamic.NewForConfigOrDie(cfg).Resource(widgets).Namespace("default").Create(ctx, w, metav1.CreateOptions{}); err != nil {
		f.Fatal(err)
	}
}

var widgets = schema.GroupVersionResource{Group: "fuzz.example.com", Version: "v1", Resource: "widgets"}

// checkUnchanged: dry runs wrote nothing, so every target is still at the
// generation it was created with.
func checkUnchanged(f *testing.F, cfg *rest.Config) {
	f.Cleanup(func() {
		ctx := context.Background()
		cm, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Get(ctx, "cm", metav1.GetOptions{})
		if err != nil || cm.Data["a"] != "1" || len(cm.Data) != 1 {
			f.Errorf("config map after dry runs: %v %v", cm.Data, err)
		}
		w, err := dynamic.NewForConfigOrDie(cfg).Resource(widgets).Namespace("default").Get(ctx, "w", metav1.GetOptions{})
		if err != nil || w.GetGeneration() != 1 {
			f.Errorf("widget after dry runs: %v", err)
		}
	})
}
