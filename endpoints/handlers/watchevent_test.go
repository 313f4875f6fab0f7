package handlers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage"
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

func newTestWatchEncoder(t testing.TB, scope *Scope, accept string, w io.Writer) *watchEncoder {
	t.Helper()
	r, _ := http.NewRequest(http.MethodGet, "/api/v1/namespaces/ns/configmaps?watch=1", nil)
	r.Header.Set("Accept", accept)
	out, err := negotiateOutput(r, scope.Serializer, scope.answerShapes())
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

// TestWatchListIsTheCodecsEncoding: the initial events of a WatchList from
// the watch cache, which a protobuf watch writes from the objects' stored
// encodings without decoding them, are byte for byte what the codec
// writes for the decoded objects, in every form a watch takes.
func TestWatchListIsTheCodecsEncoding(t *testing.T) {
	scope, s := configMapScope(t)
	odd := oddConfigMaps(
		// Lengths of one, two and three bytes as varints.
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Data: map[string]string{"d": strings.Repeat("d", 200)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Data: map[string]string{"e": strings.Repeat("e", 20000)}},
	)
	for _, cm := range odd {
		cm.Namespace = "wl"
		if err := s.Create(context.Background(), cmKey("wl", cm.Name), cm, &corev1.ConfigMap{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, accept := range []string{
		kruntime.ContentTypeJSON, kruntime.ContentTypeProtobuf,
		kruntime.ContentTypeJSON + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
		kruntime.ContentTypeProtobuf + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
		kruntime.ContentTypeJSON + ";as=Table;g=meta.k8s.io;v=v1",
	} {
		t.Run(accept, func(t *testing.T) {
			events := initialEvents(t, scope, "wl")
			if len(events) != len(odd) {
				t.Fatalf("%d initial events, want %d", len(events), len(odd))
			}
			for _, ev := range events {
				co, ok := ev.Object.(kruntime.CacheableObject)
				if !ok {
					t.Fatalf("initial event object %T, want the cache's stored object", ev.Object)
				}
				decoded := co.GetObject()
				enc := newTestWatchEncoder(t, scope, accept, io.Discard)
				if _, stored := enc.storedProtobuf(ev.Object); stored != (accept == kruntime.ContentTypeProtobuf) {
					t.Errorf("written from the stored encoding: %t", stored)
				}
				got := watchEventBytes(t, scope, accept, ev)
				if want := watchEventBytes(t, scope, accept, watch.Event{Type: ev.Type, Object: decoded}); !bytes.Equal(got, want) {
					t.Errorf("initial event of %s:\n got %q\nwant %q", decoded.(*corev1.ConfigMap).Name, got, want)
				}
			}
		})
	}
}

// initialEvents are the ADDED events of a WatchList of ns's config maps
// as the watch handler receives them.
func initialEvents(t testing.TB, scope *Scope, ns string) []watch.Event {
	t.Helper()
	ctx, cancel := context.WithCancel(request.WithNamespace(context.Background(), ns))
	defer cancel()
	w, err := scope.Storage.(rest.Watcher).Watch(ctx, &rest.ListOptions{
		LabelSelector: labels.Everything(), FieldSelector: fields.Everything(),
		SendInitialEvents: new(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks: true, Objects: storage.EncodedObjects})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var events []watch.Event
	for ev := range w.ResultChan() {
		if ev.Type == watch.Bookmark {
			return events
		}
		events = append(events, ev)
	}
	t.Fatal("the watch ended before its initial events did")
	return nil
}

// BenchmarkWatchListEvents writes the initial events of a WatchList of
// 1,000 config maps of 256 bytes of data, as a protobuf watch does.
func BenchmarkWatchListEvents(b *testing.B) {
	scope, s := configMapScope(b)
	createConfigMaps(b, s, "bench", 1000, 256)
	events := initialEvents(b, scope, "bench")
	b.ReportAllocs()
	for b.Loop() {
		enc := newTestWatchEncoder(b, scope, kruntime.ContentTypeProtobuf, io.Discard)
		for _, ev := range events {
			if err := enc.write(io.Discard, ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}
