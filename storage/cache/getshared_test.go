package cache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

type testDefaulter struct{}

var testPrepareID = reflect.TypeOf(testDefaulter{})

// defaultLabels is a defaulting on read: it gives every object a label.
func defaultLabels(obj runtime.Object) {
	cm := obj.(*corev1.ConfigMap)
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["defaulted"] = "true"
}

func getShared(t *testing.T, c *Cacher, ns, name string) runtime.CacheableObject {
	t.Helper()
	obj, err := c.GetShared(context.Background(), cmKey(ns, name), storage.GetOptions{}, testPrepareID, defaultLabels)
	if err != nil {
		t.Fatalf("GetShared %s/%s: %v", ns, name, err)
	}
	co, ok := obj.(runtime.CacheableObject)
	if !ok {
		t.Fatalf("GetShared %s/%s: a %T, not a shared object", ns, name, obj)
	}
	return co
}

// encodeCounting encodes co with an encoder that counts its calls and
// writes the data of the object it is given.
func encodeCounting(t *testing.T, co runtime.CacheableObject, calls *int) string {
	t.Helper()
	var buf bytes.Buffer
	err := co.CacheEncode("test", func(obj runtime.Object, w io.Writer) error {
		*calls++
		cm := obj.(*corev1.ConfigMap)
		_, err := io.WriteString(w, cm.ResourceVersion+" "+cm.Data["k"]+" "+cm.Labels["defaulted"])
		return err
	}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestGetShared: consistent GETs of an unchanged object share one
// prepared object and its encoding; a change makes a new one, seen by the
// next GET; the copies handed out are prepared and the caller's own.
func TestGetShared(t *testing.T) {
	s := &countingStorage{Store: newTestStore(t)}
	c := newTestCacher(t, s, Config{})
	created := create(t, s.Store, "shared", "a", "k", "1")
	// Served by the cache once it has seen the write (until then, from
	// the backend, as a plain object).
	waitForRV(t, c, rvOf(t, created.ResourceVersion))
	gets := s.gets.Load()
	calls := 0
	first := getShared(t, c, "shared", "a")
	want := created.ResourceVersion + " 1 true"
	for range 3 {
		co := getShared(t, c, "shared", "a")
		if co != first {
			t.Error("GETs of an unchanged object answered with different objects")
		}
		if got := encodeCounting(t, co, &calls); got != want {
			t.Errorf("encoded %q, want %q", got, want)
		}
	}
	if calls != 1 {
		t.Errorf("%d encodings of an unchanged object, want 1", calls)
	}
	copied := first.GetObject().(*corev1.ConfigMap)
	if copied.Labels["defaulted"] != "true" {
		t.Errorf("GetObject is not prepared: %v", copied.Labels)
	}
	copied.Data["k"] = "changed by the caller"

	updated := setData(t, s.Store, "shared", "a", "k", "2")
	waitForRV(t, c, rvOf(t, updated.ResourceVersion))
	co := getShared(t, c, "shared", "a")
	if got, want := encodeCounting(t, co, &calls), updated.ResourceVersion+" 2 true"; got != want {
		t.Errorf("after an update, encoded %q, want %q", got, want)
	}
	if n := s.gets.Load() - gets; n != 0 {
		t.Errorf("%d gets went to the backend", n)
	}

	remove(t, s.Store, "shared", "a")
	_, err := c.GetShared(context.Background(), cmKey("shared", "a"), storage.GetOptions{}, testPrepareID, defaultLabels)
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("GetShared after delete: %v", err)
	}
}

// TestGetSharedFallback: what the cache cannot serve comes from the
// backend, prepared, as an object of the caller's.
func TestGetSharedFallback(t *testing.T) {
	s := newTestStore(t)
	c := newTestCacher(t, quietStorage{s}, Config{})
	updated := create(t, s, "shared-fallback", "a", "k", "1")
	obj, err := c.GetShared(context.Background(), cmKey("shared-fallback", "a"), storage.GetOptions{}, testPrepareID, defaultLabels)
	if err != nil {
		t.Fatal(err)
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.ResourceVersion != updated.ResourceVersion || cm.Labels["defaulted"] != "true" {
		t.Fatalf("fallback answer %#v", obj)
	}
}
