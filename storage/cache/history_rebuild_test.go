package cache

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// refHistory is what a history must answer, kept the plain way: the
// whole state after every revision.
type refHistory struct {
	states map[uint64]map[string]*element // after each event, and at the start
	rvs    []uint64                       // the revisions in states, in order
}

// at is the state at rv: the one after the last event at or before it.
func (r *refHistory) at(rv uint64) map[string]*element {
	i, found := slices.BinarySearch(r.rvs, rv)
	if !found {
		i--
	}
	return r.states[r.rvs[i]]
}

// sameState reports how t differs from want; "" if it does not.
func sameState(t *tree, want map[string]*element) string {
	got := map[string]*element{}
	t.Ascend(func(e *element) bool { got[e.key] = e; return true })
	if len(got) != len(want) {
		return fmt.Sprintf("%d elements, want %d", len(got), len(want))
	}
	for k, e := range want {
		if got[k] != e {
			return fmt.Sprintf("%s is %p, want %p", k, got[k], e)
		}
	}
	return ""
}

// TestHistoryRebuild: the state at every revision of the window, rebuilt
// from the checkpoints or kept, is the one the events make, in any order
// of the reads, after evictions and compactions, and stays so as events
// are recorded after it.
func TestHistoryRebuild(t *testing.T) {
	t0 := time.Now()
	type step struct {
		record  int    // events to record
		compact uint64 // then compact to this many revisions before the last (0: none)
		evictAt time.Duration
	}
	for _, tc := range []struct {
		name  string
		cfg   HistoryConfig
		steps []step
		order string // of the reads: "up", "down" or "random"
	}{
		{"no eviction", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 1000}, []step{{record: 300}}, "up"},
		{"no eviction, newest first", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 1000}, []step{{record: 300}}, "down"},
		{"capacity off a checkpoint", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 50}, []step{{record: 150}, {record: 37}}, "random"},
		{"capacity of one", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 1}, []step{{record: 100}}, "random"},
		{"capacity of a checkpoint's span", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: checkpointEvery}, []step{{record: 3 * checkpointEvery}, {record: 5}}, "down"},
		{"age", HistoryConfig{Window: 100 * time.Second, MinEvents: 1, MaxEvents: 1000}, []step{{record: 250, evictAt: 300 * time.Second}}, "random"},
		{"compaction", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 1000}, []step{{record: 200, compact: 70}, {record: 10, compact: 3}}, "random"},
		{"compaction ahead of the cache", HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 1000}, []step{{record: 100}, {compact: 0}}, "up"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			h := &history{cfg: tc.cfg}
			state := map[string]*element{}
			ref := &refHistory{states: map[uint64]map[string]*element{}}
			snapshot := func(rv uint64) {
				ref.states[rv] = maps.Clone(state)
				ref.rvs = append(ref.rvs, rv)
			}
			rv := uint64(10)
			h.reset(newTree(), rv)
			snapshot(rv)
			n := 0
			for _, st := range tc.steps {
				for range st.record {
					rv += 1 + rng.Uint64N(3) // revisions of other resources between
					key := fmt.Sprintf("k%02d", rng.IntN(40))
					ev := &event{key: key, rv: rv, at: t0.Add(time.Duration(n) * time.Second)}
					n++
					switch _, exists := state[key]; {
					case exists && rng.IntN(3) == 0:
						ev.typ, ev.elem = watch.Deleted, &element{key: key}
						delete(state, key)
					case exists:
						ev.typ, ev.elem = watch.Modified, &element{key: key}
						state[key] = ev.elem
					default:
						ev.typ, ev.elem = watch.Added, &element{key: key}
						state[key] = ev.elem
					}
					h.record(ev)
					snapshot(rv)
				}
				if st.evictAt > 0 {
					h.evict(t0.Add(st.evictAt))
				}
				if st.compact > 0 {
					h.compact(rv-st.compact, rv)
				}
			}
			if tc.name == "compaction ahead of the cache" {
				h.compact(rv+5, rv)
			}
			oldest := h.oldest()
			if oldest < ref.rvs[0] {
				t.Fatalf("the history serves %d, before its start %d", oldest, ref.rvs[0])
			}
			var reads []uint64
			for r := oldest; r <= rv; r++ {
				reads = append(reads, r)
			}
			switch tc.order {
			case "down":
				slices.Reverse(reads)
			case "random":
				rng.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
			}
			got := map[uint64]*tree{}
			for _, r := range reads {
				snap, ok := h.snapshotAt(r)
				if !ok {
					t.Fatalf("snapshotAt(%d) not served; oldest %d", r, oldest)
				}
				if d := sameState(snap, ref.at(r)); d != "" {
					t.Fatalf("snapshotAt(%d): %s", r, d)
				}
				got[r] = snap
			}
			if oldest > ref.rvs[0] {
				if _, ok := h.snapshotAt(oldest - 1); ok {
					t.Errorf("snapshotAt(%d) served, older than the history (%d)", oldest-1, oldest)
				}
			}
			if d := sameState(h.latest(), state); d != "" {
				t.Errorf("latest: %s", d)
			}
			// Events after the reads change none of the states read.
			for i := range 2 * checkpointEvery {
				rv++
				key := fmt.Sprintf("k%02d", i%40)
				h.record(&event{typ: watch.Added, key: key, elem: &element{key: key}, rv: rv, at: t0.Add(time.Duration(n) * time.Second)})
			}
			for r, snap := range got {
				if d := sameState(snap, ref.at(r)); d != "" {
					t.Fatalf("snapshotAt(%d) after more events: %s", r, d)
				}
			}
		})
	}
}

// TestHistorySnapshotsOnDemand: recording keeps the state after every
// checkpointEvery-th event only; a read at the latest revision keeps it
// once, for every reader.
func TestHistorySnapshotsOnDemand(t *testing.T) {
	const events = 10*checkpointEvery + 5
	h := testHistory(HistoryConfig{Window: time.Hour, MinEvents: 1, MaxEvents: 2 * events}, time.Now(), seq(2, events)...)
	kept := func() int {
		n := 0
		for _, ev := range h.live() {
			if ev.snap != nil {
				n++
			}
		}
		return n
	}
	if n := kept(); n != events/checkpointEvery {
		t.Fatalf("%d events keep a state, want %d", n, events/checkpointEvery)
	}
	a, b := h.latest(), h.latest()
	if a != b || kept() != events/checkpointEvery+1 {
		t.Errorf("two reads of the latest state made %d states, want one", kept()-events/checkpointEvery)
	}
	if s, _ := h.snapshotAt(events + 1); s != a || a.Len() != events {
		t.Errorf("snapshotAt the latest revision is not the latest state")
	}
}

// seq returns n revisions from first on.
func seq(first uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out
}
