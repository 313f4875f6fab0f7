package cache

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"weak"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// openAndEnd opens n watches of ns from its current revision, waits until
// each has the event of one write, then stops them and waits until each
// has ended: the cache dispatched an event to all n.
func openAndEnd(t testing.TB, c *Cacher, ns string, n, round int) []weak.Pointer[cacheWatcher] {
	t.Helper()
	rv := fmt.Sprint(cacheRV(c))
	ws := make([]watch.Interface, n)
	for i := range ws {
		w, err := c.Watch(context.Background(), "/configmaps/"+ns, storage.ListOptions{Recursive: true, ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	setData(t, c, ns, "a", "round", fmt.Sprint(round))
	ended := make([]weak.Pointer[cacheWatcher], n)
	for i, w := range ws {
		expectEvent(t, w, watch.Modified, "a")
		w.Stop()
		for range w.ResultChan() {
		}
		ended[i] = weak.Make(w.(*cacheWatcher))
	}
	return ended
}

// TestEndedWatchersNotKept: once its watch has ended, nothing of the
// cache keeps a watcher, whose channels, context and unread events would
// otherwise stay in memory. The buffer that collects an event's watchers
// kept them until an event with as many watchers reused its slots.
func TestEndedWatchersNotKept(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{})
	waitForRV(t, c, rvOf(t, create(t, c, "ended", "a", "round", "0").ResourceVersion))
	ended := openAndEnd(t, c, "ended", 3, 1)
	runtime.GC()
	for i, w := range ended {
		if w.Value() != nil {
			t.Errorf("watcher %d is still in memory after its watch ended", i)
		}
	}
}

// BenchmarkEndedWatchersHeap: the heap that 1,000 watchers leave behind
// once their watches have ended (retained-B/watcher), after each round
// of opening them, one event delivered to all, and ending them.
func BenchmarkEndedWatchersHeap(b *testing.B) {
	const n = 1000
	c := newTestCacher(b, newTestStore(b), Config{})
	waitForRV(b, c, rvOf(b, create(b, c, "ended", "a", "round", "0").ResourceVersion))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	round := 0
	for b.Loop() {
		round++
		openAndEnd(b, c, "ended", n, round)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "retained-B/watcher")
}
