// Package storagetest is the conformance suite of storage.Interface: every
// implementation (etcd3, the watch cache) runs the same RunTest functions
// against a real backend.
//
// The store under test holds core/v1 ConfigMaps under ResourcePrefix, and
// nothing else is written under that prefix while a RunTest function runs
// (give each call a fresh backend prefix). Subtests keep apart by using one
// namespace each.
package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/storage"
)

// ResourcePrefix is the resource prefix the store under test must use.
const ResourcePrefix = "/configmaps"

// CompactFunc compacts the backend's history: afterwards no revision
// before rev can be read or watched from.
type CompactFunc func(ctx context.Context, rev uint64) error

// NewObject and NewList are the NewFunc and NewListFunc of the store under
// test.
func NewObject() runtime.Object { return &corev1.ConfigMap{} }

// NewList returns an empty ConfigMapList.
func NewList() runtime.Object { return &corev1.ConfigMapList{} }

func key(ns, name string) string { return ResourcePrefix + "/" + ns + "/" + name }

func nsKey(ns string) string { return ResourcePrefix + "/" + ns }

func configMap(ns, name string, lbls map[string]string, data ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls, UID: types.UID("uid-" + name)},
		Data:       map[string]string{},
	}
	for i := 0; i+1 < len(data); i += 2 {
		cm.Data[data[i]] = data[i+1]
	}
	return cm
}

// create stores obj and returns what the store returned.
func create(ctx context.Context, t *testing.T, s storage.Interface, obj *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	if err := s.Create(ctx, key(obj.Namespace, obj.Name), obj.DeepCopy(), out, 0); err != nil {
		t.Fatalf("Create %s/%s: %v", obj.Namespace, obj.Name, err)
	}
	return out
}

func get(ctx context.Context, t *testing.T, s storage.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	if err := s.Get(ctx, key(ns, name), storage.GetOptions{}, out); err != nil {
		t.Fatalf("Get %s/%s: %v", ns, name, err)
	}
	return out
}

// setData updates one data entry of an object and returns the result.
func setData(ctx context.Context, t *testing.T, s storage.Interface, ns, name, k, v string) *corev1.ConfigMap {
	t.Helper()
	return update(ctx, t, s, ns, name, func(cm *corev1.ConfigMap) { cm.Data[k] = v })
}

// update applies mutate to the stored object and returns the result.
func update(ctx context.Context, t *testing.T, s storage.Interface, ns, name string, mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(ctx, key(ns, name), out, false, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		cm := in.(*corev1.ConfigMap).DeepCopy()
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		mutate(cm)
		return cm, nil, nil
	}, nil)
	if err != nil {
		t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return out
}

func remove(ctx context.Context, t *testing.T, s storage.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	if err := s.Delete(ctx, key(ns, name), out, nil, nil, nil); err != nil {
		t.Fatalf("Delete %s/%s: %v", ns, name, err)
	}
	return out
}

// currentRV returns the backend's revision.
func currentRV(ctx context.Context, t *testing.T, s storage.Interface) uint64 {
	t.Helper()
	rv, err := s.CurrentResourceVersion(ctx)
	if err != nil {
		t.Fatalf("CurrentResourceVersion: %v", err)
	}
	return rv
}

// rvOf parses an object's resourceVersion, failing the test if unset.
func rvOf(t *testing.T, rv string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || v == 0 {
		t.Fatalf("resourceVersion %q is not a positive integer", rv)
	}
	return v
}

func rvString(rv uint64) string { return strconv.FormatUint(rv, 10) }

// getAttrs is the AttrFunc of ConfigMaps: labels, and the metadata fields.
func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, nil, fmt.Errorf("not a ConfigMap: %T", obj)
	}
	return cm.Labels, fields.Set{"metadata.name": cm.Name, "metadata.namespace": cm.Namespace}, nil
}

// labelPredicate selects objects by a label selector such as "a=b".
func labelPredicate(t *testing.T, selector string) storage.SelectionPredicate {
	t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		t.Fatal(err)
	}
	return storage.SelectionPredicate{Label: sel, GetAttrs: getAttrs}
}

func expectErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

func names(items []corev1.ConfigMap) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out
}
