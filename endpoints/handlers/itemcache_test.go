package handlers

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// TestListedItemEncodingsRemembered: a protobuf list of a cache that
// keeps its objects decoded remembers its items' encodings, so the next list of the same objects writes them as they
// are; both are the codec's encoding, and a changed object (a new object
// in the cache) is encoded anew.
func TestListedItemEncodingsRemembered(t *testing.T) {
	scope, s := configMapScopeWith(t, false)
	ctx := context.Background()
	for _, name := range []string{"a", "b", "c"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "remembered", Name: name}, Data: map[string]string{"k": name}}
		if err := s.Create(ctx, cmKey("remembered", name), cm, &corev1.ConfigMap{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	list := func() []byte {
		t.Helper()
		rec := httptest.NewRecorder()
		scope.List(rec, listRequest("remembered", kruntime.ContentTypeProtobuf), false)
		if rec.Code != http.StatusOK {
			t.Fatalf("list = %d: %s", rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	first := list()
	for _, item := range cachedItems(t, scope, "remembered") {
		if protoItems.lookup(item) == nil {
			t.Errorf("%s: its encoding was not remembered", item.(*corev1.ConfigMap).Name)
		}
	}
	want := wholeListAnswer(t, scope, "remembered", kruntime.ContentTypeProtobuf)
	for i, got := range [][]byte{first, list()} {
		if !bytes.Equal(got, want) {
			t.Errorf("list %d:\n got %q\nwant %q", i+1, got, want)
		}
	}

	err := s.GuaranteedUpdate(ctx, cmKey("remembered", "b"), &corev1.ConfigMap{}, false, nil,
		func(in kruntime.Object, _ storage.ResponseMeta) (kruntime.Object, *uint64, error) {
			cm := in.(*corev1.ConfigMap).DeepCopy()
			cm.Data["k"] = "changed"
			return cm, nil, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := list() // consistent: it waits for the cache to see the update
	if !bytes.Contains(got, []byte("changed")) {
		t.Errorf("the list after an update does not have it: %q", got)
	}
	if want := wholeListAnswer(t, scope, "remembered", kruntime.ContentTypeProtobuf); !bytes.Equal(got, want) {
		t.Errorf("list after an update:\n got %q\nwant %q", got, want)
	}
}

// cachedItems are the watch cache's objects that a list of ns hands over.
func cachedItems(t *testing.T, scope *Scope, ns string) []kruntime.Object {
	t.Helper()
	ctx := listRequest(ns, kruntime.ContentTypeProtobuf).Context()
	_, items, err := scope.listForResponse(ctx, scope.Storage.(rest.Lister), &rest.ListOptions{
		LabelSelector: labels.Everything(), FieldSelector: fields.Everything(), Objects: storage.CachedObjects})
	if err != nil || items == nil {
		t.Fatalf("listing %s: items %v, %v", ns, items, err)
	}
	return itemsOf(t, items)
}

// TestItemEncodingsBounded: past its limit the cache encodes without
// remembering, and it forgets an object's encoding once the object is
// collected.
func TestItemEncodingsBounded(t *testing.T) {
	c := newItemEncodings(1000, 10)
	small := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "small"}}
	large := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "large"}, Data: map[string]string{"k": strings.Repeat("x", 2000)}}
	for _, cm := range []*corev1.ConfigMap{small, large} {
		data, err := c.encode(cm, cm)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := cm.Marshal(); !bytes.Equal(data, want) {
			t.Errorf("%s encoded as %q, want %q", cm.Name, data, want)
		}
	}
	if c.lookup(small) == nil {
		t.Error("the small object's encoding was not remembered")
	}
	if c.lookup(large) != nil {
		t.Error("an encoding past the limit was remembered")
	}
	if got, want := c.bytes.Load(), int64(small.Size()); got != want {
		t.Errorf("%d bytes remembered, want %d", got, want)
	}
	runtime.KeepAlive(small)
	small = nil
	for range 200 {
		runtime.GC()
		if c.bytes.Load() == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond) // cleanups run after the collection
	}
	t.Errorf("%d bytes still remembered after the object was collected", c.bytes.Load())
}
