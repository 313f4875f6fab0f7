package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

type objects []runtime.Object

func (o objects) Len() int                         { return len(o) }
func (o objects) At(i int) (runtime.Object, error) { return o[i], nil }

// ids are the objects' own addresses, as a cache that keeps them decoded
// gives.
func (o objects) ids(i int) *byte { return (*byte)(reflect.ValueOf(o[i]).UnsafePointer()) }

func configMaps(n int) objects {
	out := make(objects, n)
	for i := range out {
		out[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i)}}
	}
	return out
}

// TestProtoItemsSource: stored messages when storage kept them, the
// remembered encodings for the cache's objects of a list small enough,
// the objects marshaled as written otherwise (and always without caches).
func TestProtoItemsSource(t *testing.T) {
	stored := func(int) ([]byte, error) { return nil, nil }
	c := NewCachesWith(NewItemEncodings(1<<20, 2), slog.Default())
	for _, tc := range []struct {
		name   string
		c      *Caches
		items  objects
		ids    bool
		stored func(int) ([]byte, error)
		want   string
	}{
		{"stored", c, configMaps(3), true, stored, "wire.StoredMessages"},
		{"cached", c, configMaps(2), true, nil, "*wire.CachedObjects"},
		{"too many to remember", c, configMaps(3), true, nil, "*wire.Objects"},
		{"not the cache's", c, configMaps(1), false, nil, "*wire.Objects"},
		{"no caches", nil, configMaps(1), true, nil, "*wire.Objects"},
	} {
		var ids Identities
		if tc.ids {
			ids = tc.items.ids
		}
		if got := fmt.Sprintf("%T", tc.c.ProtoItems(tc.items, ids, tc.stored)); got != tc.want {
			t.Errorf("%s: source %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestProtoItemsWriteTheSameList: every source writes the same bytes.
func TestProtoItemsWriteTheSameList(t *testing.T) {
	items := configMaps(3)
	var messages [][]byte
	for _, item := range items {
		data, err := item.(*corev1.ConfigMap).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		messages = append(messages, data)
	}
	c := NewCaches(slog.Default())
	sources := map[string]ProtoItems{
		"stored":  c.ProtoItems(items, items.ids, func(i int) ([]byte, error) { return messages[i], nil }),
		"cached":  c.ProtoItems(items, items.ids, nil),
		"objects": c.ProtoItems(items, nil, nil),
	}
	var want []byte
	for _, name := range []string{"objects", "stored", "cached"} {
		var buf bytes.Buffer
		if err := WriteProtobufList(&buf, runtime.Unknown{Raw: []byte{0x0a, 0x00}}, sources[name]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want == nil {
			want = buf.Bytes()
		} else if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s wrote %q, objects wrote %q", name, buf.Bytes(), want)
		}
	}
}

// TestFallbackReportedOnce: a fallback is logged once per reason and
// kind, however often it happens.
func TestFallbackReportedOnce(t *testing.T) {
	var log bytes.Buffer
	c := NewCaches(slog.New(slog.NewTextHandler(&log, nil)))
	for range 3 {
		c.Fallback("no items field", "*v1.Foo", errors.New("boom"))
		c.Fallback("no items field", "*v1.Bar", nil)
		c.Fallback("not an envelope", "*v1.Foo", nil)
	}
	if n := strings.Count(log.String(), "\n"); n != 3 {
		t.Errorf("%d lines logged, want 3:\n%s", n, log.String())
	}
	var none *Caches
	none.Fallback("no caches", "*v1.Foo", nil) // must not panic
}

// TestJSONListRemembered: a JSON list of the cache's objects writes what
// encoding/json writes for each, without the kind and apiVersion the
// cache's built-in objects carry (kube's items have none), the first time
// and from the remembered encodings the next; items with no identities are
// not remembered.
func TestJSONListRemembered(t *testing.T) {
	items := configMaps(3)
	head := []byte(`{"kind":"ConfigMapList",` + string(JSONListEnd))
	var want bytes.Buffer
	want.WriteString(`{"kind":"ConfigMapList","items":[`)
	for i, item := range items {
		data, _ := json.Marshal(item)
		item.(*corev1.ConfigMap).TypeMeta = metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}
		if i > 0 {
			want.WriteByte(',')
		}
		want.Write(data)
	}
	want.WriteString("]}\n")
	c := NewCaches(slog.Default())
	for round := range 2 {
		var buf bytes.Buffer
		if err := c.WriteJSONList(&buf, head, items, true, items.ids); err != nil {
			t.Fatal(err)
		}
		if buf.String() != want.String() {
			t.Errorf("list %d:\n%s\nwant\n%s", round, buf.String(), want.String())
		}
	}
	for i := range items {
		if c.items.Lookup(items.ids(i), JSON) == nil {
			t.Errorf("item %d: its JSON was not remembered", i)
		}
	}
	other := configMaps(1)
	if err := c.WriteJSONList(io.Discard, head, other, true, nil); err != nil {
		t.Fatal(err)
	}
	if c.items.Lookup(other.ids(0), JSON) != nil {
		t.Error("an item with no identity was remembered")
	}
}
