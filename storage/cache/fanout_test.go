package cache

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// writeMany creates n objects in ns from 4 writers and returns their
// names by revision.
func writeMany(t *testing.T, s storage.Interface, ns string, n int) map[uint64]string {
	t.Helper()
	var mu sync.Mutex
	written := map[uint64]string{}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < n; i += 4 {
				out := create(t, s, ns, fmt.Sprintf("cm-%04d", i))
				mu.Lock()
				written[rvOf(t, out.ResourceVersion)] = out.Name
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return written
}

// collect reads n events from w and returns the name of each by revision,
// failing on anything but ADDED events in increasing revision order.
func collect(w watch.Interface, n int) (map[uint64]string, error) {
	got := map[uint64]string{}
	var last uint64
	for len(got) < n {
		e, ok := <-w.ResultChan()
		if !ok {
			return got, fmt.Errorf("watch closed after %d events", len(got))
		}
		cm, isCM := e.Object.(*corev1.ConfigMap)
		if e.Type != watch.Added || !isCM {
			return got, fmt.Errorf("got %s %T", e.Type, e.Object)
		}
		var rv uint64
		fmt.Sscan(cm.ResourceVersion, &rv)
		if rv <= last {
			return got, fmt.Errorf("event at %d after %d", rv, last)
		}
		last = rv
		got[rv] = cm.Name
	}
	return got, nil
}

// TestFanOut: 100 watchers each see every one of 1,000 writes, in order.
func TestFanOut(t *testing.T) {
	const watchers, writes = 100, 1000
	s := &countingStorage{Store: newTestStore(t)}
	// Buffers that hold every event: on a loaded machine a watcher's
	// goroutine may not run for a while, and this test is about delivery,
	// not about closing slow watchers (TestSlowWatcher is).
	c := newTestCacher(t, s, Config{WatcherBuffer: writes + 10})
	from := fmt.Sprint(cacheRV(c))
	results := make([]chan error, watchers)
	for i := range results {
		w := startWatch(t, c, "/configmaps/fanout", storage.ListOptions{Recursive: true, ResourceVersion: from})
		results[i] = make(chan error, 1)
		go func() {
			got, err := collect(w, writes)
			if err == nil && len(got) != writes {
				err = fmt.Errorf("got %d events", len(got))
			}
			results[i] <- err
		}()
	}
	written := writeMany(t, c, "fanout", writes)
	for i, r := range results {
		if err := <-r; err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
	}
	if len(written) != writes {
		t.Fatalf("wrote %d", len(written))
	}
	if n := s.watches.Load(); n != 1 {
		t.Errorf("the backend served %d watches, want the cache's one", n)
	}
}

// TestSlowWatcher: a watcher that does not read is closed, without an
// error event and without holding up the others.
func TestSlowWatcher(t *testing.T) {
	// The slow watcher holds 2 x DefaultWatcherBuffer events unread.
	const writes = 3 * 2 * DefaultWatcherBuffer
	var logs syncBuffer
	c := newTestCacher(t, newTestStore(t), Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	from := fmt.Sprint(cacheRV(c))
	opts := storage.ListOptions{Recursive: true, ResourceVersion: from}
	slow := startWatch(t, c, "/configmaps/slow", opts)
	results := make([]chan error, 5)
	for i := range results {
		w := startWatch(t, c, "/configmaps/slow", opts)
		results[i] = make(chan error, 1)
		go func() {
			_, err := collect(w, writes)
			results[i] <- err
		}()
	}
	writeMany(t, c, "slow", writes)
	for i, r := range results {
		if err := <-r; err != nil {
			t.Fatalf("fast watcher %d: %v", i, err)
		}
	}
	got, err := collect(slow, writes)
	if err == nil || !strings.Contains(err.Error(), "watch closed") {
		t.Fatalf("slow watcher got %d events, err %v; want it closed", len(got), err)
	}
	if !strings.Contains(logs.String(), "closing a watcher that does not keep up") {
		t.Errorf("no log of the closing; logs:\n%s", logs.String())
	}
}
