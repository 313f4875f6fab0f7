package cache

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/capstan-io/capstan/storage"
)

// testHistory returns a history of events at the given revisions, one
// second apart from t0, each adding an element.
func testHistory(cfg HistoryConfig, t0 time.Time, rvs ...uint64) *history {
	h := &history{cfg: cfg}
	h.reset(newTree(), 1)
	for i, rv := range rvs {
		key := fmt.Sprint(rv)
		h.record(&event{typ: watch.Added, key: key, elem: &element{key: key}, rv: rv, at: t0.Add(time.Duration(i) * time.Second)})
	}
	return h
}

func TestHistoryEviction(t *testing.T) {
	t0 := time.Now()
	for _, tc := range []struct {
		name   string
		cfg    HistoryConfig
		rvs    []uint64
		now    time.Duration // after t0, for a final evict
		baseRV uint64
		kept   int
	}{
		{"within bounds", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 10}, []uint64{2, 3, 4}, 0, 1, 3},
		{"capacity", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 2}, []uint64{2, 3, 4, 7}, 0, 3, 2},
		{"age", HistoryConfig{Window: 90 * time.Second, MinEvents: 1, MaxEvents: 10}, []uint64{2, 3, 4}, 92 * time.Second, 3, 1},
		{"age keeps MinEvents", HistoryConfig{Window: time.Second, MinEvents: 2, MaxEvents: 10}, []uint64{2, 3, 4}, time.Hour, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := testHistory(tc.cfg, t0, tc.rvs...)
			h.evict(t0.Add(tc.now))
			if h.baseRV != tc.baseRV || len(h.live()) != tc.kept {
				t.Fatalf("baseRV %d with %d events, want %d with %d", h.baseRV, len(h.live()), tc.baseRV, tc.kept)
			}
		})
	}
}

func TestHistoryLookups(t *testing.T) {
	h := testHistory(HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 3}, time.Now(), 5, 8, 9, 12)
	// 5 was dropped: the history starts at 5, with 8, 9 and 12.
	for rv, want := range map[uint64]int{5: 1, 6: 1, 8: 2, 11: 3, 12: 4, 20: 4} {
		snap, ok := h.snapshotAt(rv)
		if !ok || snap.Len() != want {
			t.Errorf("snapshotAt(%d) has %d elements (ok %v), want %d", rv, snap.Len(), ok, want)
		}
	}
	if _, ok := h.snapshotAt(4); ok {
		t.Error("snapshotAt(4) served a revision older than the history")
	}
	for rv, want := range map[uint64]int{5: 3, 8: 2, 12: 0, 13: 0} {
		if ev, err := h.since(rv); err != nil || len(ev) != want {
			t.Errorf("since(%d) = %d events, %v; want %d", rv, len(ev), err, want)
		}
	}
	if _, err := h.since(4); err == nil || err.Error() != "too old resource version: 4 (5)" {
		t.Errorf("since(4): %v", err)
	}
	h.compact(9, 12)
	if h.baseRV != 9 || len(h.live()) != 1 {
		t.Fatalf("after compact(9): baseRV %d with %d events", h.baseRV, len(h.live()))
	}
	if snap, ok := h.snapshotAt(10); !ok || snap.Len() != 3 {
		t.Errorf("snapshotAt(10) after compact(9) is wrong")
	}
}

// expectExpired reads the 410 error event of a watch from a forgotten
// revision.
func expectExpired(t *testing.T, c *Cacher, rv, oldest uint64) {
	t.Helper()
	w := startWatch(t, c, "/configmaps/hist", storage.ListOptions{Recursive: true, ResourceVersion: fmt.Sprint(rv)})
	e := nextEvent(t, w)
	s, ok := e.Object.(*metav1.Status)
	if e.Type != watch.Error || !ok || s.Code != http.StatusGone || s.Reason != metav1.StatusReasonExpired {
		t.Fatalf("watch from %d: got %s %+v, want 410 Expired", rv, e.Type, e.Object)
	}
	if want := fmt.Sprintf("too old resource version: %d (%d)", rv, oldest); s.Message != want {
		t.Errorf("message %q, want %q", s.Message, want)
	}
}

// TestHistoryWindow: a watch resumes from a revision inside the window and
// gets 410 from one outside it; an exact list outside it is read from the
// backend.
func TestHistoryWindow(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	c := newTestCacher(t, newTestStore(t), Config{Clock: clk,
		History: HistoryConfig{Window: time.Minute, MinEvents: 1, MaxEvents: 1000}})
	a := create(t, c, "hist", "a")
	b := create(t, c, "hist", "b")
	waitForRV(t, c, rvOf(t, b.ResourceVersion))
	w := startWatch(t, c, "/configmaps/hist", storage.ListOptions{Recursive: true, ResourceVersion: a.ResourceVersion})
	expectEvent(t, w, watch.Added, "b")

	clk.Step(2 * time.Minute)
	d := create(t, c, "hist", "d")
	waitForRV(t, c, rvOf(t, d.ResourceVersion))
	expectExpired(t, c, rvOf(t, a.ResourceVersion), rvOf(t, b.ResourceVersion))
	w = startWatch(t, c, "/configmaps/hist", storage.ListOptions{Recursive: true, ResourceVersion: b.ResourceVersion})
	expectEvent(t, w, watch.Added, "d")

	exact := list(t, c, "/configmaps/hist", storage.ListOptions{ResourceVersion: a.ResourceVersion, ResourceVersionMatch: storage.MatchExact})
	if len(exact.Items) != 1 || exact.Items[0].Name != "a" || exact.ResourceVersion != a.ResourceVersion {
		t.Fatalf("exact list at %s: %+v", a.ResourceVersion, exact)
	}
}

// TestHistoryCapacity: the history keeps at most MaxEvents events.
func TestHistoryCapacity(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{History: HistoryConfig{MinEvents: 1, MaxEvents: 3}})
	var rvs []uint64
	for i := range 5 {
		rvs = append(rvs, rvOf(t, create(t, c, "hist", fmt.Sprint(i)).ResourceVersion))
	}
	waitForRV(t, c, rvs[4])
	expectExpired(t, c, rvs[0], rvs[1])
	w := startWatch(t, c, "/configmaps/hist", storage.ListOptions{Recursive: true, ResourceVersion: fmt.Sprint(rvs[1])})
	for i := 2; i < 5; i++ {
		expectEvent(t, w, watch.Added, fmt.Sprint(i))
	}
}

// TestHistoryCompactedAhead: a compaction past the cache's revision (the
// cache has yet to see the last events before it) expires every older
// revision at once, as in the backend.
func TestHistoryCompactedAhead(t *testing.T) {
	h := testHistory(HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 10}, time.Now(), 5, 8)
	h.compact(12, 8)
	for _, rv := range []uint64{5, 8, 11} {
		if _, ok := h.snapshotAt(rv); ok {
			t.Errorf("snapshotAt(%d) served after a compaction to 12", rv)
		}
		if _, err := h.since(rv); err == nil {
			t.Errorf("since(%d) served after a compaction to 12", rv)
		}
	}
	if _, ok := h.snapshotAt(12); !ok {
		t.Error("snapshotAt(12), the compacted revision itself, not served")
	}
}
