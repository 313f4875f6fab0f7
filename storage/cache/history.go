package cache

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// event is one change of the resource, as the cache saw it.
type event struct {
	typ watch.EventType // Added, Modified, Deleted; Bookmark for bookmarks
	key string
	// elem is the new state; for Deleted the last state, with the
	// resourceVersion of the deletion (an element of no state).
	elem *element
	// prev is the state before the change; nil if the cache had none.
	prev *element
	rv   uint64
	at   time.Time // when the cache received it
	// decoded is when storage decoded it; zero if storage did not say.
	decoded time.Time
	// snap is the state right after the change, the answer to a list at
	// any revision from rv up to the next event's; nil unless the event is
	// a checkpoint or someone listed at it (see history).
	snap *tree
	// shared is elem's object as the watches receive it, shared by them
	// (sharedObj); prevShared is prev's, for their predicates. Held
	// weakly when elements are encoded: the history keeps encodings, and
	// an object decoded for the watches lives while they use it.
	shared, prevShared sharedSlot
}

// checkpointEvery is how many events the history records between two
// snapshots of the state (checkpoints). A snapshot costs about a
// root-to-leaf path of B-tree nodes that the next change must copy; a
// list at a revision between checkpoints replays at most this many events
// on a copy of the one before it. 64 keeps the heap close to what a much
// sparser history keeps, where a snapshot per event more than doubles it,
// and keeps a replay short (BenchmarkFillHeap30000 measures the heap).
const checkpointEvery = 64

// history is the window of recent events, with the state after some of
// them. It answers watches that resume from a revision and lists at an
// exact revision, from baseRV on: every event after baseRV is kept.
//
// The state after an event is kept only for every checkpointEvery-th
// event (a checkpoint) and for the events someone listed at; the state
// after any other is rebuilt on demand from the nearest one before it.
// The events between base and the first live one are kept (not served)
// so that the state at baseRV can be rebuilt too.
type history struct {
	cfg HistoryConfig
	// events is ordered by rv; events[anchor:head] are not newer than
	// baseRV and only replayed, the live ones are events[head:].
	events       []*event
	anchor, head int
	// base is the state before events[anchor].
	base   *tree
	baseRV uint64
	// compacted is the revision the backend last compacted to: no older
	// one is served, even while the cache has yet to reach it.
	compacted uint64
	// state is the current state: the one record changes.
	state *tree
	// sinceSnap counts the events recorded since the last one with a
	// state.
	sinceSnap int
	// snapMu serialises, between readers that hold the cache's read lock,
	// the states made on demand and kept on events (snap), base and
	// anchor: a writer holds the cache's write lock instead.
	snapMu sync.Mutex
}

// reset forgets every event: the history starts again at state, at
// revision rv; record changes state from then on.
func (h *history) reset(state *tree, rv uint64) {
	clear(h.events)
	h.events, h.anchor, h.head = h.events[:0], 0, 0
	h.state, h.sinceSnap = state, 0
	h.base, h.baseRV = state.Clone(), rv
}

func (h *history) live() []*event { return h.events[h.head:] }

// get returns the element at key in the current state. The caller holds
// the cache's lock.
func (h *history) get(key string) (*element, bool) { return get(h.state, key) }

// record applies ev to the state, with ev.prev the element it replaces,
// and appends it.
func (h *history) record(ev *event) {
	if old, ok := get(h.state, ev.key); ok {
		ev.prev = old
	}
	ev.applyTo(h.state)
	if h.sinceSnap++; h.sinceSnap >= checkpointEvery {
		ev.snap, h.sinceSnap = h.state.Clone(), 0
	}
	h.append(ev)
}

// applyTo makes ev's change to t.
func (ev *event) applyTo(t *tree) {
	if ev.typ == watch.Deleted {
		t.Delete(&element{key: ev.key})
	} else {
		t.ReplaceOrInsert(ev.elem)
	}
}

// append adds ev, then forgets the events the configuration lets go.
func (h *history) append(ev *event) {
	h.events = append(h.events, ev)
	h.evict(ev.at)
}

// evict forgets the oldest events while there are more than MaxEvents, or
// more than MinEvents and the oldest is older than Window.
func (h *history) evict(now time.Time) {
	for {
		n := len(h.events) - h.head
		if n == 0 || n <= h.cfg.MaxEvents && (n <= h.cfg.MinEvents || now.Sub(h.events[h.head].at) <= h.cfg.Window) {
			break
		}
		h.dropOldest()
	}
	// Reclaim the dropped slots once they are the larger part.
	if h.anchor > 64 && h.anchor > len(h.events)/2 {
		n := copy(h.events, h.events[h.anchor:])
		clear(h.events[n:])
		h.events, h.head, h.anchor = h.events[:n], h.head-h.anchor, 0
	}
}

// dropOldest stops serving the oldest live event's predecessors; the
// events before it are kept until one with a state becomes the base.
func (h *history) dropOldest() {
	ev := h.events[h.head]
	h.head++
	h.baseRV = ev.rv
	if ev.snap != nil {
		h.rebase(ev.snap)
	}
}

// rebase makes t, the state after events[head-1], the base.
func (h *history) rebase(t *tree) {
	clear(h.events[h.anchor:h.head])
	h.base, h.anchor = t, h.head
}

// compact forgets what is older than rev, the revision the backend
// compacted to, so that the cache never serves a revision the backend has
// lost: current is the cache's revision.
func (h *history) compact(rev, current uint64) {
	for len(h.events) > h.head && h.events[h.head].rv <= rev {
		h.dropOldest()
	}
	h.baseRV = max(h.baseRV, min(rev, current))
	h.compacted = max(h.compacted, rev)
}

// oldest is the oldest revision served.
func (h *history) oldest() uint64 { return max(h.baseRV, h.compacted) }

// latest is the state after the last event. The caller holds the cache's
// lock.
func (h *history) latest() *tree {
	h.snapMu.Lock()
	defer h.snapMu.Unlock()
	return h.stateAfter(len(h.events) - 1)
}

// snapshotAt returns the state at revision rv, which must not be newer
// than the cache. ok is false if rv is older than the history. The caller
// holds the cache's lock.
func (h *history) snapshotAt(rv uint64) (*tree, bool) {
	if rv < h.oldest() {
		return nil, false
	}
	ev := h.live()
	i := sort.Search(len(ev), func(i int) bool { return ev[i].rv > rv })
	h.snapMu.Lock()
	defer h.snapMu.Unlock()
	return h.stateAfter(h.head + i - 1), true
}

// stateAfter returns the state after events[i], i >= head-1 (the state at
// baseRV), and keeps it on the event. The caller holds snapMu.
func (h *history) stateAfter(i int) *tree {
	if i < h.anchor {
		return h.base
	}
	ev := h.events[i]
	if ev.snap != nil {
		return ev.snap
	}
	var t *tree
	if i == len(h.events)-1 {
		t = h.state.Clone()
		h.sinceSnap = 0
	} else {
		t = h.replayTo(i)
	}
	ev.snap = t
	if i == h.head-1 {
		h.rebase(t)
	}
	return t
}

// replayTo builds the state after events[i] from the nearest state before
// it.
func (h *history) replayTo(i int) *tree {
	from, t := i, h.base
	for from > h.anchor && h.events[from-1].snap == nil {
		from--
	}
	if from > h.anchor {
		t = h.events[from-1].snap
	}
	t = t.Clone()
	for _, ev := range h.events[from : i+1] {
		ev.applyTo(t)
	}
	return t
}

// since returns the events after revision rv, or an error with kube's
// message if some of them are no longer kept.
func (h *history) since(rv uint64) ([]*event, error) {
	if rv < h.oldest() {
		return nil, fmt.Errorf("too old resource version: %d (%d)", rv, h.oldest())
	}
	ev := h.live()
	i := sort.Search(len(ev), func(i int) bool { return ev[i].rv > rv })
	if i == len(ev) {
		return nil, nil
	}
	return append([]*event(nil), ev[i:]...), nil
}
