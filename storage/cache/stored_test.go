package cache

import (
	"bytes"
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// TestInitialEventsStored: the initial events of a watch that encodes
// its objects (EncodedObjects) carry, from a cache that keeps objects
// encoded, the stored encoding itself: byte for byte the codec's encoding
// of the object at the version it is stored at, and none at another;
// their objects decode to what was stored, and the predicate still
// selects them. Watches of the other kinds get objects.
func TestInitialEventsStored(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{})
	want := map[string]*corev1.ConfigMap{}
	for _, name := range []string{"a", "b", "c"} {
		cm, out := configMap("stored", name, "k", name), &corev1.ConfigMap{}
		cm.Labels = map[string]string{"name": name}
		if err := c.Create(context.Background(), cmKey("stored", name), cm, out, 0); err != nil {
			t.Fatal(err)
		}
		want[name] = out
	}
	waitForRV(t, c, rvOf(t, want["c"].ResourceVersion))
	initial := func(objects storage.ObjectSharing, sel labels.Selector) []watch.Event {
		opts := storage.ListOptions{Recursive: true, SendInitialEvents: new(true), ProgressNotify: true,
			Objects: objects, Predicate: storage.SelectionPredicate{Label: sel, GetAttrs: labelsOf}}
		w := startWatch(t, c, "/configmaps/stored", opts)
		var events []watch.Event
		for {
			ev := nextEvent(t, w)
			if ev.Type == watch.Bookmark {
				return events
			}
			events = append(events, ev)
		}
	}
	for _, ev := range initial(storage.EncodedObjects, labels.Everything()) {
		pe, ok := ev.Object.(storage.ProtobufEnvelope)
		if !ok {
			t.Fatalf("initial event object %T, want a storage.ProtobufEnvelope", ev.Object)
		}
		obj := ev.Object.(kruntime.CacheableObject).GetObject().(*corev1.ConfigMap)
		cm := want[obj.Name]
		if cm == nil || obj.ResourceVersion != cm.ResourceVersion || obj.Labels["name"] != obj.Name {
			t.Fatalf("initial event of %+v, want one of %v", obj, want)
		}
		var encoded bytes.Buffer
		if err := c.codec.Encode(obj, &encoded); err != nil {
			t.Fatal(err)
		}
		if got, ok := pe.Protobuf(schema.GroupVersion{Version: "v1"}); !ok || !bytes.Equal(got, encoded.Bytes()) {
			t.Errorf("%s: stored protobuf %q (%t), want the codec's %q", obj.Name, got, ok, encoded.Bytes())
		}
		if _, ok := pe.Protobuf(schema.GroupVersion{Group: "apps", Version: "v1"}); ok {
			t.Errorf("%s: protobuf for a version it is not stored at", obj.Name)
		}
	}
	selected := initial(storage.EncodedObjects, labels.SelectorFromSet(labels.Set{"name": "b"}))
	if len(selected) != 1 || selected[0].Object.(kruntime.CacheableObject).GetObject().(*corev1.ConfigMap).Name != "b" {
		t.Errorf("initial events by label: %v, want b's", selected)
	}
	for _, objects := range []storage.ObjectSharing{storage.CopiedObjects, storage.CachedObjects} {
		events := initial(objects, labels.Everything())
		if len(events) != 3 {
			t.Fatalf("%d initial events, want 3", len(events))
		}
		for _, ev := range events {
			if _, ok := ev.Object.(*corev1.ConfigMap); !ok {
				t.Errorf("initial event object of a watch with objects %d: %T, want a ConfigMap", objects, ev.Object)
			}
		}
	}
}

func labelsOf(obj kruntime.Object) (labels.Set, fields.Set, error) {
	return obj.(*corev1.ConfigMap).Labels, nil, nil
}
