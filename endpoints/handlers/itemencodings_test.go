package handlers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/endpoints/wire"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// TestListedItemEncodingsRemembered: a protobuf or JSON list of the watch
// cache remembers its items' encodings in that form, so the next list of
// the same objects writes them as they are; both are the codec's encoding,
// and a changed object (a new one in the cache) is encoded anew. A cache
// that keeps objects encoded as protobuf writes protobuf lists from those
// encodings, and remembers none.
func TestListedItemEncodingsRemembered(t *testing.T) {
	for _, tc := range []struct {
		mediaType  string
		form       wire.Form
		encoded    bool
		remembered bool
	}{
		{kruntime.ContentTypeProtobuf, wire.Protobuf, false, true},
		{kruntime.ContentTypeJSON, wire.JSON, false, true},
		{kruntime.ContentTypeJSON, wire.JSON, true, true},
		{kruntime.ContentTypeProtobuf, wire.Protobuf, true, false},
	} {
		t.Run(fmt.Sprintf("%s,encoded=%v", tc.mediaType, tc.encoded), func(t *testing.T) {
			testListedItemEncodingsRemembered(t, tc.mediaType, tc.form, tc.encoded, tc.remembered)
		})
	}
}

func testListedItemEncodingsRemembered(t *testing.T, mediaType string, form wire.Form, encoded, wantRemembered bool) {
	scope, s := configMapScopeWith(t, encoded)
	remembered := wire.NewItemEncodings(32<<20, 1000)
	scope.Wire = wire.NewCachesWith(remembered, slog.Default())
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
		scope.List(rec, listRequest("remembered", mediaType), false)
		if rec.Code != http.StatusOK {
			t.Fatalf("list = %d: %s", rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	first := list()
	items := cachedItems(t, scope, "remembered")
	for i := range items.Len() {
		if got := remembered.Lookup(items.Identity(i), form) != nil; got != wantRemembered {
			t.Errorf("item %d: its encoding remembered: %v, want %v", i, got, wantRemembered)
		}
		if other := 1 - form; remembered.Lookup(items.Identity(i), other) != nil {
			t.Errorf("item %d: an encoding in a form not listed was remembered", i)
		}
	}
	want := wholeListAnswer(t, scope, "remembered", mediaType)
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
	if want := wholeListAnswer(t, scope, "remembered", mediaType); !bytes.Equal(got, want) {
		t.Errorf("list after an update:\n got %q\nwant %q", got, want)
	}
}

// cachedItems are the watch cache's items that a list of ns hands over.
func cachedItems(t *testing.T, scope *Scope, ns string) storage.ListItems {
	t.Helper()
	ctx := listRequest(ns, kruntime.ContentTypeProtobuf).Context()
	_, items, err := scope.listForResponse(ctx, scope.Storage.(rest.Lister), &rest.ListOptions{
		LabelSelector: labels.Everything(), FieldSelector: fields.Everything(), Objects: storage.CachedObjects})
	if err != nil || items == nil {
		t.Fatalf("listing %s: items %v, %v", ns, items, err)
	}
	return items
}
