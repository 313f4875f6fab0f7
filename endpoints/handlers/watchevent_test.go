package handlers

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// TestSharedWatchEventsEncodedOnce: watches of an object shared with
// other watches (the watch cache's) write its event as one write of bytes
// encoded once per event type, and those bytes are what the object's own
// event encodes to.
func TestSharedWatchEventsEncodedOnce(t *testing.T) {
	scope, _ := configMapScope(t)
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "7", Labels: map[string]string{"k": "v"}},
		Data:       map[string]string{"z": "1", "html": "<&>"},
	}
	for _, accept := range []string{kruntime.ContentTypeJSON, kruntime.ContentTypeProtobuf} {
		t.Run(accept, func(t *testing.T) {
			shared := &countingShared{obj: cm}
			for _, typ := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
				want := watchEventBytes(t, scope, accept, watch.Event{Type: typ, Object: cm.DeepCopy()})
				for i := range 3 {
					var out writeCounter
					if err := newTestWatchEncoder(t, scope, accept, &out).write(&out, watch.Event{Type: typ, Object: shared}); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(out.buf.Bytes(), want) {
						t.Fatalf("%s event of watch %d:\n got %q\nwant %q", typ, i, out.buf.Bytes(), want)
					}
					if out.writes != 1 {
						t.Errorf("%s event of watch %d in %d writes, want 1", typ, i, out.writes)
					}
				}
			}
			if shared.encodes != 3 {
				t.Errorf("encoded %d times for 3 event types, want 3", shared.encodes)
			}
		})
	}
}

// watchEventBytes is ev as a watch of scope's writes it when ev's object
// is not shared.
func watchEventBytes(t *testing.T, scope *Scope, accept string, ev watch.Event) []byte {
	t.Helper()
	var out writeCounter
	if err := newTestWatchEncoder(t, scope, accept, &out).write(&out, ev); err != nil {
		t.Fatal(err)
	}
	return out.buf.Bytes()
}

func newTestWatchEncoder(t *testing.T, scope *Scope, accept string, w io.Writer) *watchEncoder {
	t.Helper()
	r, _ := http.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/configmaps?watch=1", nil)
	r.Header.Set("Accept", accept)
	out, err := negotiateOutput(r, scope.Serializer, scope.shapesFor(scope.Storage.New()))
	if err != nil {
		t.Fatal(err)
	}
	return newWatchEncoder(scope, r, out, w)
}

// writeCounter keeps what is written to it, and counts the writes.
type writeCounter struct {
	buf    bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) { w.writes++; return w.buf.Write(p) }

// countingShared is a runtime.CacheableObject that caches each encoding
// and counts the encodings it made.
type countingShared struct {
	obj     kruntime.Object
	mu      sync.Mutex
	cached  map[kruntime.Identifier][]byte
	encodes int
}

func (o *countingShared) CacheEncode(id kruntime.Identifier, encode func(kruntime.Object, io.Writer) error, w io.Writer) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	raw, ok := o.cached[id]
	if !ok {
		var buf bytes.Buffer
		if err := encode(o.GetObject(), &buf); err != nil {
			return err
		}
		raw = buf.Bytes()
		if o.cached == nil {
			o.cached = map[kruntime.Identifier][]byte{}
		}
		o.cached[id] = raw
		o.encodes++
	}
	_, err := w.Write(raw)
	return err
}

func (o *countingShared) GetObject() kruntime.Object       { return o.obj.DeepCopyObject() }
func (o *countingShared) DeepCopyObject() kruntime.Object  { return o.GetObject() }
func (o *countingShared) GetObjectKind() schema.ObjectKind { return o.obj.GetObjectKind() }
