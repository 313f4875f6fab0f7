package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

func getCM(t testing.TB, s storage.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	if err := s.Get(context.Background(), cmKey(ns, name), storage.GetOptions{}, out); err != nil {
		t.Fatalf("Get %s/%s: %v", ns, name, err)
	}
	return out
}

// TestConsistentGet: a get at resourceVersion "" sees every write
// acknowledged before it, through the cache or not; once writes stop, the
// cache catches up (it asks for progress) and serves them.
func TestConsistentGet(t *testing.T) {
	s := &countingStorage{Store: newTestStore(t)}
	c := newTestCacher(t, s, Config{})
	for i := range 20 {
		name := fmt.Sprintf("cm-%02d", i)
		created := create(t, c, "consistent", name, "k", "0")
		if got := getCM(t, c, "consistent", name); got.ResourceVersion != created.ResourceVersion {
			t.Fatalf("get after create at %s: %s", created.ResourceVersion, got.ResourceVersion)
		}
		updated := setData(t, s.Store, "consistent", name, "k", "v")
		if got := getCM(t, c, "consistent", name); got.ResourceVersion != updated.ResourceVersion || got.Data["k"] != "v" {
			t.Fatalf("get after an update at %s: %s %v", updated.ResourceVersion, got.ResourceVersion, got.Data)
		}
		remove(t, s.Store, "consistent", name)
		err := c.Get(context.Background(), cmKey("consistent", name), storage.GetOptions{}, &corev1.ConfigMap{})
		if !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("get after delete: %v", err)
		}
	}
	create(t, c, "consistent", "steady", "k", "0")
	// A write the cache sees no event of: only progress tells it that it
	// is current.
	create(t, newTestStore(t), "elsewhere", "x")
	for range 500 {
		gets := s.gets.Load()
		getCM(t, c, "consistent", "steady")
		if s.gets.Load() == gets {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("with no writes going on, consistent gets still go to the backend")
}

// TestConcurrentConsistentGets: many readers, each after its own write,
// each see that write, while they share revision reads.
func TestConcurrentConsistentGets(t *testing.T) {
	s := &countingStorage{Store: newTestStore(t)}
	c := newTestCacher(t, s, Config{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("w%d", w)
			create(t, s.Store, "concurrent", name, "n", "0")
			for i := range 15 {
				written := setData(t, s.Store, "concurrent", name, "n", fmt.Sprint(i))
				got := &corev1.ConfigMap{}
				if err := c.Get(context.Background(), cmKey("concurrent", name), storage.GetOptions{}, got); err != nil {
					t.Errorf("Get %s: %v", name, err)
					return
				}
				if got.ResourceVersion != written.ResourceVersion {
					t.Errorf("%s written at %s, read at %s", name, written.ResourceVersion, got.ResourceVersion)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestConsistentGetFallback: when the cache cannot learn that it is
// current, a consistent get is read from the backend.
func TestConsistentGetFallback(t *testing.T) {
	s := newTestStore(t)
	c := newTestCacher(t, quietStorage{s}, Config{})
	create(t, c, "fallback", "a", "k", "0")
	elsewhere := create(t, newTestStore(t), "elsewhere", "x")
	updated := setData(t, s, "fallback", "a", "k", "v")
	if got := getCM(t, c, "fallback", "a"); got.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("get after an update at %s: %s (a write elsewhere at %s)", updated.ResourceVersion, got.ResourceVersion, elsewhere.ResourceVersion)
	}
}

// TestConsistentGetAfterWrite: a consistent get after a write through the
// cache, while the cache has not seen it, goes to the backend at once,
// without a revision read, and sees the write; once the cache has caught
// up, gets are served by the cache again.
func TestConsistentGetAfterWrite(t *testing.T) {
	s := &heldStorage{countingStorage: &countingStorage{Store: newTestStore(t)}}
	c := newTestCacher(t, s, Config{})
	create(t, c, "written", "a", "k", "0")
	s.hold.Lock() // the cache sees nothing new until Unlock
	updated := setData(t, c, "written", "a", "k", "v")
	gets, revisionReads := s.gets.Load(), s.revisionReads.Load()
	if got := getCM(t, c, "written", "a"); got.ResourceVersion != updated.ResourceVersion || got.Data["k"] != "v" {
		t.Fatalf("get after an update at %s: %s %v", updated.ResourceVersion, got.ResourceVersion, got.Data)
	}
	if n := s.revisionReads.Load() - revisionReads; n != 0 {
		t.Errorf("the get read the backend's revision %d times; the cache is known to be behind", n)
	}
	if n := s.gets.Load() - gets; n != 1 {
		t.Errorf("the get reached the backend %d times, want 1", n)
	}
	s.hold.Unlock()
	waitForRV(t, c, rvOf(t, updated.ResourceVersion))
	for range 500 {
		gets := s.gets.Load()
		if got := getCM(t, c, "written", "a"); got.ResourceVersion != updated.ResourceVersion {
			t.Fatalf("get at %s after the cache caught up: %s", updated.ResourceVersion, got.ResourceVersion)
		}
		if s.gets.Load() == gets {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Error("once the cache caught up, consistent gets still go to the backend")
}

// heldStorage counts revision reads, and holds back its watches' events
// (progress too) while hold is locked.
type heldStorage struct {
	*countingStorage
	revisionReads atomic.Int64
	hold          sync.RWMutex
}

func (s *heldStorage) CurrentResourceVersion(ctx context.Context) (uint64, error) {
	s.revisionReads.Add(1)
	return s.countingStorage.CurrentResourceVersion(ctx)
}

func (s *heldStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.countingStorage.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	out := make(chan watch.Event)
	go func() {
		defer close(out)
		for e := range w.ResultChan() {
			s.hold.RLock()
			select {
			case out <- e:
			case <-ctx.Done():
			}
			s.hold.RUnlock()
		}
	}()
	return &heldWatch{Interface: w, out: out}, nil
}

type heldWatch struct {
	watch.Interface
	out chan watch.Event
}

func (w *heldWatch) ResultChan() <-chan watch.Event { return w.out }
