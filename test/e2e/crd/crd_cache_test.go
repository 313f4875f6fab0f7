package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
)

const cachedCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: caches.cache.example.com}
spec:
  group: cache.example.com
  scope: Namespaced
  names: {plural: caches, singular: cache, kind: Cache}
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
            properties:
              size: {type: integer}
`

// TestCustomResourceWatchCache: custom resources are served by a watch
// cache, as in kube: a list at resourceVersion 0 is answered whole from
// it, the limit ignored. A change of the CRD's spec replaces the cache:
// the watches of the old one end, and the new one holds the objects as
// the new schema reads them (here with a default it adds).
func TestCustomResourceWatchCache(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, cachedCRD)
	d := e.Dynamic(t)
	res := d.Resource(schema.GroupVersionResource{Group: "cache.example.com", Version: "v1", Resource: "caches"}).Namespace(ns)
	const objects = 3
	for i := range objects {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cache.example.com/v1", "kind": "Cache",
			"metadata": map[string]any{"name": "c" + strconv.Itoa(i)}, "spec": map[string]any{}}}
		if _, err := res.Create(e2eutil.Ctx(t), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// fromCache lists at resourceVersion 0 with a limit of 1: etcd
	// answers one item and a continue token, the cache every item.
	fromCache := func(ctx context.Context) (*unstructured.UnstructuredList, bool, error) {
		list, err := res.List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1})
		if err != nil {
			return nil, false, err
		}
		return list, len(list.Items) == objects && list.GetContinue() == "", nil
	}
	var rv string
	e2eutil.Eventually(t, 30*time.Second, "a list at resourceVersion 0 served whole by the cache", func(ctx context.Context) (bool, error) {
		list, ok, err := fromCache(ctx)
		if ok {
			rv = list.GetResourceVersion()
		}
		return ok, err
	})
	w, err := res.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := d.Resource(e2eutil.CRDGVR).Get(e2eutil.Ctx(t), "caches.cache.example.com", metav1.GetOptions{})
		if err != nil {
			return err
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		v := versions[0].(map[string]any)
		if err := unstructured.SetNestedField(v, int64(7), "schema", "openAPIV3Schema", "properties", "spec", "properties", "size", "default"); err != nil {
			return err
		}
		if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
			return err
		}
		_, err = d.Resource(e2eutil.CRDGVR).Update(e2eutil.Ctx(t), crd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("adding a default: %v", err)
	}
	ended := time.After(30 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-w.ResultChan():
		case <-ended:
			t.Fatal("the watch of the old cache did not end when the CRD changed")
		}
	}
	e2eutil.Eventually(t, 30*time.Second, "the new cache holding the objects with the new default", func(ctx context.Context) (bool, error) {
		list, ok, err := fromCache(ctx)
		if !ok || err != nil {
			return false, err
		}
		for _, item := range list.Items {
			if size, _, _ := unstructured.NestedInt64(item.Object, "spec", "size"); size != 7 {
				return false, nil
			}
		}
		return true, nil
	})
}
