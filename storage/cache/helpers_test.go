package cache

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/etcd3"
)

const eventTimeout = 10 * time.Second

func configMap(ns, name string, data ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{}}
	for i := 0; i+1 < len(data); i += 2 {
		cm.Data[data[i]] = data[i+1]
	}
	return cm
}

func cmKey(ns, name string) string { return "/configmaps/" + ns + "/" + name }

func create(t testing.TB, s storage.Interface, ns, name string, data ...string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	if err := s.Create(context.Background(), cmKey(ns, name), configMap(ns, name, data...), out, 0); err != nil {
		t.Fatalf("Create %s/%s: %v", ns, name, err)
	}
	return out
}

func setData(t testing.TB, s storage.Interface, ns, name, k, v string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(context.Background(), cmKey(ns, name), out, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			cm := in.(*corev1.ConfigMap).DeepCopy()
			cm.Data[k] = v
			return cm, nil, nil
		}, nil)
	if err != nil {
		t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return out
}

func remove(t testing.TB, s storage.Interface, ns, name string) {
	t.Helper()
	if err := s.Delete(context.Background(), cmKey(ns, name), &corev1.ConfigMap{}, nil, nil, nil); err != nil {
		t.Fatalf("Delete %s/%s: %v", ns, name, err)
	}
}

func rvOf(t testing.TB, rv string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return v
}

// cacheRV returns the revision the cache has seen everything up to.
func cacheRV(c *Cacher) uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// waitForRV waits until the cache has seen revision rv.
func waitForRV(t testing.TB, c *Cacher, rv uint64) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for {
		current := cacheRV(c)
		if current >= rv {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache at %d, not at %d after %v", current, rv, eventTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func startWatch(t testing.TB, s storage.Interface, key string, opts storage.ListOptions) watch.Interface {
	t.Helper()
	w, err := s.Watch(context.Background(), key, opts)
	if err != nil {
		t.Fatalf("Watch %s: %v", key, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func nextEvent(t testing.TB, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed, want an event")
		}
		return e
	case <-time.After(eventTimeout):
		t.Fatalf("no event within %v", eventTimeout)
	}
	return watch.Event{}
}

func expectEvent(t testing.TB, w watch.Interface, typ watch.EventType, name string) *corev1.ConfigMap {
	t.Helper()
	e := nextEvent(t, w)
	cm, ok := e.Object.(*corev1.ConfigMap)
	if e.Type != typ || !ok || cm.Name != name {
		t.Fatalf("got %s %+v, want %s %s", e.Type, e.Object, typ, name)
	}
	return cm
}

func expectNoEvent(t testing.TB, w watch.Interface) {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		t.Fatalf("unexpected event %s %+v (open %v)", e.Type, e.Object, ok)
	case <-time.After(300 * time.Millisecond):
	}
}

func list(t testing.TB, s storage.Interface, key string, opts storage.ListOptions) *corev1.ConfigMapList {
	t.Helper()
	out := &corev1.ConfigMapList{}
	opts.Recursive = true
	if err := s.GetList(context.Background(), key, opts, out); err != nil {
		t.Fatalf("GetList %s %+v: %v", key, opts, err)
	}
	return out
}

// quietStorage hides the backend's progress: its watches send no
// BOOKMARK, and it cannot be asked for progress. The cache then advances
// only with the resource's own events.
type quietStorage struct{ storage.Interface }

func (q quietStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := q.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) { return e, e.Type != watch.Bookmark }), nil
}

// countingStorage counts the gets, lists and watches that reach the
// backend.
type countingStorage struct {
	*etcd3.Store
	gets, lists, watches atomic.Int64
}

func (s *countingStorage) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	s.gets.Add(1)
	return s.Store.Get(ctx, key, opts, out)
}

func (s *countingStorage) GetList(ctx context.Context, key string, opts storage.ListOptions, out runtime.Object) error {
	s.lists.Add(1)
	return s.Store.GetList(ctx, key, opts, out)
}

func (s *countingStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	s.watches.Add(1)
	return s.Store.Watch(ctx, key, opts)
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
