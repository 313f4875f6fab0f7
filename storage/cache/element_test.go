package cache

import (
	"bytes"
	"context"
	"reflect"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/storagetest"
)

// envelope is kube's protobuf envelope of a runtime.Unknown.
func envelope(t testing.TB, u kruntime.Unknown) []byte {
	t.Helper()
	data, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("k8s\x00"), data...)
}

func TestProtobufEnvelope(t *testing.T) {
	msg := []byte{0x0a, 0x03, 'a', 'b', 'c'}
	v1 := kruntime.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	cases := []struct {
		name       string
		data       []byte
		apiVersion string
		raw        []byte
		ok         bool
	}{
		{"message", envelope(t, kruntime.Unknown{TypeMeta: v1, Raw: msg}), "v1", msg, true},
		{"empty message", envelope(t, kruntime.Unknown{TypeMeta: v1, Raw: []byte{}}), "v1", []byte{}, true},
		{"protobuf content type", envelope(t, kruntime.Unknown{TypeMeta: v1, Raw: msg, ContentType: kruntime.ContentTypeProtobuf}), "v1", msg, true},
		{"group version", envelope(t, kruntime.Unknown{TypeMeta: kruntime.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, Raw: msg}), "apps/v1", msg, true},
		{"no message", envelope(t, kruntime.Unknown{TypeMeta: v1}), "", nil, false},
		{"JSON content", envelope(t, kruntime.Unknown{TypeMeta: v1, Raw: []byte("{}"), ContentType: kruntime.ContentTypeJSON}), "", nil, false},
		{"JSON", []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`), "", nil, false},
		{"no prefix", envelope(t, kruntime.Unknown{TypeMeta: v1, Raw: msg})[4:], "", nil, false},
		{"truncated", envelope(t, kruntime.Unknown{TypeMeta: v1, Raw: msg})[:12], "", nil, false},
		{"varint field", append([]byte("k8s\x00"), 0x08, 0x01), "", nil, false},
		{"length past the end", append([]byte("k8s\x00"), 0x12, 0x7f, 0x00), "", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			apiVersion, raw, err := protobufEnvelope(tc.data)
			if (err == nil) != tc.ok {
				t.Fatalf("error %v, want ok %t", err, tc.ok)
			}
			if tc.ok && (string(apiVersion) != tc.apiVersion || !bytes.Equal(raw, tc.raw)) {
				t.Errorf("got %q %q, want %q %q", apiVersion, raw, tc.apiVersion, tc.raw)
			}
		})
	}
}

// encodedCacher is a cache that keeps objects encoded, not running: its
// elements are made and read directly.
func encodedCacher(t testing.TB) *Cacher {
	t.Helper()
	c, err := New(Config{Storage: newTestStore(t), NewFunc: storagetest.NewObject, NewListFunc: storagetest.NewList,
		ResourcePrefix: storagetest.ResourcePrefix, Codec: storagetest.NewCodec()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// FuzzStoredProtobufItem: the message a protobuf list writes from an
// element's encoding is, byte for byte, the object's own Marshal (what the
// codec writes for it as a list item), and the element decodes to the
// object it was made of, exactly as the codec decodes it.
func FuzzStoredProtobufItem(f *testing.F) {
	f.Add("a", "k", "v", "l", "x", []byte{0, 1}, true, int64(5))
	f.Add("", "", "", "", "", []byte(nil), false, int64(0))
	f.Add("héllo \u2028", "\x00", "\xff", "a/b", "", []byte{255}, true, int64(1<<40))
	c := encodedCacher(f)
	f.Fuzz(func(t *testing.T, name, key, value, label, finalizer string, bin []byte, immutable bool, rv int64) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{label: value},
				Finalizers: []string{finalizer}, ResourceVersion: formatRV(uint64(rv)), Generation: rv},
			Data: map[string]string{key: value, value: key}, BinaryData: map[string][]byte{key: bin}, Immutable: &immutable,
		}
		e, err := c.newElement("/configmaps/ns/x", cm)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := listItems{c: c, elems: []*element{e}}.Protobuf(schema.GroupVersion{Version: "v1"})(0)
		if err != nil {
			t.Fatal(err)
		}
		want, err := cm.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(raw, want) {
			t.Fatalf("stored message\n %q\nMarshal\n %q", raw, want)
		}
		got, err := c.object(e)
		if err != nil {
			t.Fatal(err)
		}
		cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"} // as the codec decodes
		if !equality.Semantic.DeepEqual(got, cm) {
			t.Fatalf("decoded %#v, want %#v", got, cm)
		}
		viaCodec := &corev1.ConfigMap{}
		if _, _, err := c.codec.Decode(e.data, nil, viaCodec); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, viaCodec) {
			t.Fatalf("decoded %#v, the codec decodes %#v", got, viaCodec)
		}
	})
}

// TestEncodedListItems: a list of an encoded cache hands over items
// decoded when asked for, one decoding per object until the next garbage
// collection (the cache keeps none after), and their protobuf messages only for the
// version they are stored at.
func TestEncodedListItems(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{})
	create(t, c, "items", "a", "k", "v")
	var items storage.ListItems
	opts := storage.ListOptions{Recursive: true, Objects: storage.CachedObjects, SharedItems: &items}
	if err := c.GetList(context.Background(), "/configmaps/items", opts, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	if items == nil || items.Len() != 1 || items.Identity(0) == nil {
		t.Fatalf("items %v", items)
	}
	var again storage.ListItems
	opts.SharedItems = &again
	if err := c.GetList(context.Background(), "/configmaps/items", opts, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	if again.Identity(0) != items.Identity(0) {
		t.Error("two lists of the same object version give it different identities")
	}
	first, err := items.At(0)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := items.At(0)
	if first != second || first.(*corev1.ConfigMap).Data["k"] != "v" {
		t.Errorf("items.At: %v and %v, want one decoding", first, second)
	}
	if items.Protobuf(schema.GroupVersion{Group: "apps", Version: "v1"}) != nil {
		t.Error("the items give their protobuf messages for a version they are not stored at")
	}
	raw, err := items.Protobuf(schema.GroupVersion{Version: "v1"})(0)
	if want, _ := first.(*corev1.ConfigMap).Marshal(); err != nil || !bytes.Equal(raw, want) {
		t.Errorf("protobuf item %q, %v; want %q", raw, err, want)
	}
	first, second = nil, nil
	runtime.GC()
	if o, _ := items.(listItems).elems[0].read.load(); o != nil {
		t.Error("the cache keeps the decoding of an item no longer in use")
	}
}

// TestGetSharedHeldWeakly: an encoded cache keeps the object GetShared
// answered with while it is in use, and not after.
func TestGetSharedHeldWeakly(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{})
	waitForRV(t, c, rvOf(t, create(t, c, "weak", "a", "k", "v").ResourceVersion))
	read := func() kruntime.Object {
		t.Helper()
		o, err := c.GetShared(context.Background(), cmKey("weak", "a"), storage.GetOptions{}, testPrepareID, defaultLabels)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	slot := func() *sharedObject {
		c.mu.RLock()
		e, ok := get(c.hist.latest(), cmKey("weak", "a"))
		c.mu.RUnlock()
		if !ok {
			t.Fatal("not cached")
		}
		o, _ := e.shared.load()
		return o
	}
	first := read()
	runtime.GC()
	if read() != first || slot() != first {
		t.Fatal("a GET in use was decoded again")
	}
	runtime.KeepAlive(first)
	first = nil
	runtime.GC()
	if slot() != nil {
		t.Fatal("the cache keeps the decoded object of a GET no longer in use")
	}
}
