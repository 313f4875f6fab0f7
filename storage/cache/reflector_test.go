package cache

import (
	"context"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// breakableStorage lets a test end the cache's watch of the backend,
// optionally with an event.
type breakableStorage struct {
	*countingStorage
	mu    sync.Mutex
	brk   chan *watch.Event // breaks the current watch
	ready chan struct{}     // closed when a watch is open
}

func newBreakableStorage(t *testing.T) *breakableStorage {
	return &breakableStorage{countingStorage: &countingStorage{Store: newTestStore(t)}, ready: make(chan struct{})}
}

func (b *breakableStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	inner, err := b.countingStorage.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	ch, brk := make(chan watch.Event), make(chan *watch.Event, 1)
	pw := watch.NewProxyWatcher(ch)
	send := func(e watch.Event) bool {
		select {
		case ch <- e:
			return true
		case <-pw.StopChan():
			return false
		}
	}
	go func() {
		defer close(ch)
		defer inner.Stop()
		for {
			select {
			case e, ok := <-inner.ResultChan():
				if !ok || !send(e) {
					return
				}
			case injected := <-brk:
				if injected != nil {
					send(*injected)
				}
				return
			case <-pw.StopChan():
				return
			}
		}
	}()
	b.mu.Lock()
	b.brk = brk
	close(b.ready)
	b.ready = make(chan struct{})
	b.mu.Unlock()
	return pw, nil
}

// breakWatch ends the backend watch with e (nil: just closes it) and
// returns a channel closed when the cache opens its next watch.
func (b *breakableStorage) breakWatch(e *watch.Event) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.brk <- e
	return b.ready
}

// TestResumeWatch: when the backend's watch ends, the cache watches again
// from its revision; its own watchers notice nothing.
func TestResumeWatch(t *testing.T) {
	b := newBreakableStorage(t)
	c := newTestCacher(t, b, Config{})
	w := startWatch(t, c, "/configmaps/resume", storage.ListOptions{Recursive: true})
	create(t, c, "resume", "a")
	expectEvent(t, w, watch.Added, "a")
	<-b.breakWatch(nil)
	create(t, c, "resume", "b")
	expectEvent(t, w, watch.Added, "b")
	if n := b.lists.Load(); n != 1 {
		t.Errorf("the cache listed %d times", n)
	}
}

// TestRelist: when the backend's watch cannot resume (410), the cache
// ends its watchers, lists again, and serves the state it missed.
func TestRelist(t *testing.T) {
	b := newBreakableStorage(t)
	c := newTestCacher(t, b, Config{})
	w := startWatch(t, c, "/configmaps/relist", storage.ListOptions{Recursive: true})
	create(t, c, "relist", "a")
	expectEvent(t, w, watch.Added, "a")
	expired := apierrors.NewResourceExpired("too old resource version: 1 (2)").Status()
	<-b.breakWatch(&watch.Event{Type: watch.Error, Object: &expired})
	for e := range w.ResultChan() {
		t.Fatalf("watcher got %s after the relist; want it closed", e.Type)
	}
	create(t, c, "relist", "b")
	if l := list(t, c, "/configmaps/relist", storage.ListOptions{}); len(l.Items) != 2 {
		t.Fatalf("after relist: %v", listNames(l))
	}
	if n := b.lists.Load(); n != 2 {
		t.Errorf("the cache listed %d times, want 2", n)
	}
}
