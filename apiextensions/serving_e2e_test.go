package apiextensions_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/internal/testkit"
)

// readFirstCRD has a required field, a default and the status subresource.
const readFirstCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.readfirst.example.com
spec:
  group: readfirst.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image]
            properties:
              image: {type: string}
              replicas: {type: integer, default: 1}
          status:
            type: object
            properties:
              phase: {type: string}
`

// A CRD first read (as informers of every resource read each CRD: get,
// list, watch) is served by read-only endpoints; its first write builds
// the full ones, with validation, defaults and managed fields, on the same
// storage, so that a watch opened before sees the write.
func TestCustomResourcesReadBeforeWrite(t *testing.T) {
	s := testkit.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(readFirstCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the CRD: %v", err)
	}
	// Served once discovery lists it: the server has taken in the
	// Established CRD then.
	disco := discovery.NewDiscoveryClientForConfigOrDie(s.Config)
	openAPIWait(t, "the CRD established and its resource discovered", func() (bool, error) {
		got, err := dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil || !crdEstablished(got) {
			return false, err
		}
		list, err := disco.ServerResourcesForGroupVersion("readfirst.example.com/v1")
		return err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "gadgets" }), nil
	})
	gadgets := dyn.Resource(schema.GroupVersionResource{Group: "readfirst.example.com", Version: "v1", Resource: "gadgets"}).Namespace("default")

	// Reads first.
	w, err := gadgets.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch before any write: %v", err)
	}
	defer w.Stop()
	if list, err := gadgets.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Fatalf("list before any write = %v, %v; want empty", list, err)
	}
	if _, err := gadgets.Get(ctx, "g1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get before any write: %v, want NotFound", err)
	}
	if _, err := gadgets.Get(ctx, "g1", metav1.GetOptions{}, "status"); !apierrors.IsNotFound(err) {
		t.Fatalf("get of the status before any write: %v, want NotFound", err)
	}

	// Then writes: validated, defaulted, with managed fields.
	gadget := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "readfirst.example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": "g1"}, "spec": spec,
		}}
	}
	if _, err := gadgets.Create(ctx, gadget(map[string]any{"replicas": int64(2)}), metav1.CreateOptions{}); !apierrors.IsInvalid(err) ||
		!strings.Contains(err.Error(), "spec.image") {
		t.Fatalf("create without the required spec.image: %v, want Invalid", err)
	}
	created, err := gadgets.Create(ctx, gadget(map[string]any{"image": "busybox"}), metav1.CreateOptions{FieldManager: "tester"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); r != 1 {
		t.Errorf("created spec.replicas = %d, want the default 1", r)
	}
	if mf := created.GetManagedFields(); len(mf) != 1 || mf[0].Manager != "tester" {
		t.Errorf("created managed fields = %+v, want tester's", mf)
	}

	// The watch opened on the read-only endpoints sees the write.
	select {
	case ev := <-w.ResultChan():
		if u, ok := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Added || !ok || u.GetName() != "g1" {
			t.Errorf("first event = %s %v, want ADDED g1", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("the watch opened before the first write saw nothing")
	}

	// Reads now go through the full endpoints; server-side apply is typed
	// by the schema; the status subresource takes its own writes.
	if got, err := gadgets.Get(ctx, "g1", metav1.GetOptions{}); err != nil || got.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatalf("get after the create = %v, %v", got, err)
	}
	apply := []byte(`{"apiVersion":"readfirst.example.com/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"image":"nginx"}}`)
	applied, err := gadgets.Patch(ctx, "g1", types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "applier", Force: ptrTrue()})
	if err != nil {
		t.Fatalf("server-side apply: %v", err)
	}
	if img, _, _ := unstructured.NestedString(applied.Object, "spec", "image"); img != "nginx" {
		t.Errorf("applied spec.image = %q, want nginx", img)
	}
	applied.Object["status"] = map[string]any{"phase": "Running"}
	if _, err := gadgets.UpdateStatus(ctx, applied, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("status update: %v", err)
	}
	if got, err := gadgets.Get(ctx, "g1", metav1.GetOptions{}, "status"); err != nil {
		t.Fatalf("get of the status: %v", err)
	} else if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Running" {
		t.Errorf("status.phase = %q, want Running", phase)
	}

	// After a restart, read-only endpoints read the stored objects first
	// (the garbage collector lists every resource), through the schema
	// they make then: the objects come back as they were written.
	s.Restart(t)
	if dyn, err = dynamic.NewForConfig(s.Config); err != nil {
		t.Fatal(err)
	}
	gadgets = dyn.Resource(schema.GroupVersionResource{Group: "readfirst.example.com", Version: "v1", Resource: "gadgets"}).Namespace("default")
	list, err := gadgets.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list after a restart = %v, %v; want g1", list, err)
	}
	g := list.Items[0].Object
	img, _, _ := unstructured.NestedString(g, "spec", "image")
	replicas, _, _ := unstructured.NestedInt64(g, "spec", "replicas")
	phase, _, _ := unstructured.NestedString(g, "status", "phase")
	if img != "nginx" || replicas != 1 || phase != "Running" {
		t.Errorf("g1 after a restart: image %q, replicas %d, phase %q; want nginx, 1, Running", img, replicas, phase)
	}
	if _, err := gadgets.Create(ctx, gadget(map[string]any{"replicas": int64(2)}), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("create without spec.image after a restart: %v, want Invalid", err)
	}
}

func ptrTrue() *bool { b := true; return &b }
