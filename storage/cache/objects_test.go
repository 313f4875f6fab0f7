package cache

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// TestCachedObjectsWatches checks that CachedObjects watches get the
// cached objects themselves, in the initial events and the changes,
// EncodedObjects watches one shared wrapper per event, and other watches
// copies of their own.
func TestCachedObjectsWatches(t *testing.T) {
	s := newTestStore(t)
	c := newTestCacher(t, s, Config{Codec: keptObjects})
	create(t, s, "ns", "before", "a", "b")
	waitForRV(t, c, rvOf(t, setData(t, s, "ns", "before", "k", "v").ResourceVersion))

	watchWith := func(objects storage.ObjectSharing) watch.Interface {
		t.Helper()
		w, err := c.Watch(context.Background(), "/configmaps/", storage.ListOptions{Recursive: true, Objects: objects})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	shared1, shared2, copying := watchWith(storage.CachedObjects), watchWith(storage.CachedObjects), watchWith(storage.CopiedObjects)
	encoded1, encoded2 := watchWith(storage.EncodedObjects), watchWith(storage.EncodedObjects)

	check := func(typ watch.EventType, name string, live bool) {
		t.Helper()
		a, b := expectEvent(t, shared1, typ, name), expectEvent(t, shared2, typ, name)
		cp := expectEvent(t, copying, typ, name)
		if a != b {
			t.Errorf("%s %s: the read-only watches got two objects, want the cached one", typ, name)
		}
		if runtime.Object(cp) == runtime.Object(a) {
			t.Errorf("%s %s: a CopiedObjects watch got the cached object", typ, name)
		}
		e1, e2 := nextEvent(t, encoded1), nextEvent(t, encoded2)
		if !live { // initial events are copies: no other watch shares them
			if _, ok := e1.Object.(*corev1.ConfigMap); !ok || e1.Object == runtime.Object(a) {
				t.Errorf("%s %s: an EncodedObjects watch's initial event is %T, want a copy", typ, name, e1.Object)
			}
			return
		}
		w1, ok := e1.Object.(*sharedObject)
		if !ok || e1.Type != typ || e2.Object != e1.Object || w1.obj != runtime.Object(a) {
			t.Errorf("%s %s: the EncodedObjects watches got %T and %T, want one wrapper of the cached object", typ, name, e1.Object, e2.Object)
		}
	}
	check(watch.Added, "before", false)
	create(t, s, "ns", "after", "a", "b")
	check(watch.Added, "after", true)
	setData(t, s, "ns", "after", "k", "v")
	check(watch.Modified, "after", true)
	remove(t, s, "ns", "after")
	check(watch.Deleted, "after", true)
}
