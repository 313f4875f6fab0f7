package cache

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/capstan-io/capstan/storage"
)

// newDrivenCacher is a ready cache at revision 1 that no Run feeds: the
// test applies the events itself, on its own goroutine, as Run would.
func newDrivenCacher(t *testing.T, cfg Config) *Cacher {
	t.Helper()
	cfg.Storage, cfg.ResourcePrefix = newTestStore(t), "/configmaps"
	cfg.NewFunc = func() runtime.Object { return &corev1.ConfigMap{} }
	cfg.NewListFunc = func() runtime.Object { return &corev1.ConfigMapList{} }
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.replace(newTree(), 1)
	return c
}

// applyAdded applies the creation of config map ns/cm-<rv> at rv.
func applyAdded(t *testing.T, c *Cacher, ns string, rv uint64) {
	t.Helper()
	cm := configMap(ns, fmt.Sprintf("cm-%d", rv))
	cm.ResourceVersion = fmt.Sprint(rv)
	if err := c.apply(watch.Event{Type: watch.Added, Object: cm}); err != nil {
		t.Fatal(err)
	}
}

// isDirect reports whether Run's goroutine now sends w's events itself.
func isDirect(w watch.Interface) bool {
	cw := w.(*cacheWatcher)
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.direct
}

// waitDirect waits until w's goroutine has caught up and made it direct.
func waitDirect(t *testing.T, w watch.Interface) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for !isDirect(w) {
		if time.Now().After(deadline) {
			t.Fatal("the watcher is not direct")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHandOverKeepsOrder: watchers that start with a backlog get every
// event once and in order: the backlog, the events that came while their
// goroutine was still sending it, and those that came while their live
// events were handed over, between their goroutine and the dispatching
// one, as they lagged or caught up; and then they are direct.
func TestHandOverKeepsOrder(t *testing.T) {
	const buffer, watchers = 200, 8
	// More backlog than the buffer: the goroutines are still sending it
	// when the next events come, and those wait in their input.
	const backlog, waiting, during = buffer + 50, buffer / 2, buffer / 2
	const total = backlog + waiting + during
	c := newDrivenCacher(t, Config{WatcherBuffer: buffer})
	rv := uint64(1)
	for range backlog {
		rv++
		applyAdded(t, c, "ho", rv)
	}
	ws := make([]watch.Interface, watchers)
	for i := range ws {
		ws[i] = startWatch(t, c, "/configmaps/ho", storage.ListOptions{Recursive: true, ResourceVersion: "1"})
	}
	for range waiting {
		rv++
		applyAdded(t, c, "ho", rv)
	}
	results := make([]chan error, watchers)
	for i, w := range ws {
		results[i] = make(chan error, 1)
		go func() {
			got, err := collect(w, total)
			for want := uint64(2); err == nil && want < 2+total; want++ {
				if got[want] == "" {
					err = fmt.Errorf("no event at %d", want)
				}
			}
			results[i] <- err
		}()
	}
	for range during {
		rv++
		applyAdded(t, c, "ho", rv)
	}
	for i, r := range results {
		if err := <-r; err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
		waitDirect(t, ws[i])
	}
}

// TestLaggingDirectWatcher: a direct watcher whose reader lags gets the
// events that find its result full through its goroutine, and every event
// once and in order while it catches up and becomes direct again.
func TestLaggingDirectWatcher(t *testing.T) {
	const buffer, watchers = 100, 8
	// A full result and a quarter of input, then events as the readers
	// catch up: never enough to fill input.
	const unread, later = buffer + buffer/4, buffer / 2
	c := newDrivenCacher(t, Config{WatcherBuffer: buffer})
	ws := make([]watch.Interface, watchers)
	for i := range ws {
		ws[i] = startWatch(t, c, "/configmaps/lag", storage.ListOptions{Recursive: true, ResourceVersion: "1"})
		waitDirect(t, ws[i])
	}
	rv := uint64(1)
	for range unread {
		rv++
		applyAdded(t, c, "lag", rv)
	}
	results := make([]chan error, watchers)
	for i, w := range ws {
		results[i] = make(chan error, 1)
		go func() {
			_, err := collect(w, unread+later)
			results[i] <- err
		}()
	}
	for range later {
		rv++
		applyAdded(t, c, "lag", rv)
	}
	for i, r := range results {
		if err := <-r; err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
		waitDirect(t, ws[i])
	}
}

// TestStopWhileDispatchWaits: a watcher stopped while the dispatch waits
// for room in its buffer lets the dispatch go on at once, and its result
// closes after the events it holds.
func TestStopWhileDispatchWaits(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	c := newDrivenCacher(t, Config{WatcherBuffer: 1, Clock: clk})
	w := startWatch(t, c, "/configmaps/stop", storage.ListOptions{Recursive: true, ResourceVersion: "1"})
	waitDirect(t, w)
	applyAdded(t, c, "stop", 2) // fills result
	clk.Step(10 * time.Second)  // a full budget; its timer never fires
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		// The goroutine takes 3 from input and waits for room in
		// result; 4 fills input, and 5 waits for room there.
		for rv := uint64(3); rv <= 5; rv++ {
			applyAdded(t, c, "stop", rv)
		}
	}()
	waitForTimer(t, clk)
	w.Stop()
	select {
	case <-applied:
	case <-time.After(eventTimeout):
		t.Fatal("the dispatch still waits for the stopped watcher")
	}
	expectEvent(t, w, watch.Added, "cm-2")
	if e, ok := <-w.ResultChan(); ok {
		t.Fatalf("got %s after the stop, want the result closed", e.Type)
	}
}

// waitForTimer waits until something waits on one of clk's timers.
func waitForTimer(t *testing.T, clk interface{ HasWaiters() bool }) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("no timer started")
		}
		time.Sleep(time.Millisecond)
	}
}
