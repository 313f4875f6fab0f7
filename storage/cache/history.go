package cache

import (
	"fmt"
	"sort"
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
	// snap is the state right after the change: the answer to a list at
	// any revision from rv up to the next event's.
	snap *tree
	// shared is elem's object as the watches receive it, shared by them
	// (sharedObj); prevShared is prev's, for their predicates. Held
	// weakly when elements are encoded: the history keeps encodings, and
	// an object decoded for the watches lives while they use it.
	shared, prevShared sharedSlot
}

// history is the window of recent events and, with each, the state after
// it. It answers watches that resume from a revision and lists at an exact
// revision, from baseRV on: every event after baseRV is kept, and base is
// the state at baseRV.
type history struct {
	cfg    HistoryConfig
	events []*event // ordered by rv; the live ones are events[head:]
	head   int
	base   *tree
	baseRV uint64
	// compacted is the revision the backend last compacted to: no older
	// one is served, even while the cache has yet to reach it.
	compacted uint64
}

// reset forgets every event: the history starts again at the state t at
// revision rv.
func (h *history) reset(t *tree, rv uint64) {
	clear(h.events)
	h.events, h.head = h.events[:0], 0
	h.base, h.baseRV = t, rv
}

func (h *history) live() []*event { return h.events[h.head:] }

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
	if h.head > 64 && h.head > len(h.events)/2 {
		n := copy(h.events, h.events[h.head:])
		clear(h.events[n:])
		h.events, h.head = h.events[:n], 0
	}
}

func (h *history) dropOldest() {
	ev := h.events[h.head]
	h.events[h.head] = nil
	h.head++
	h.base, h.baseRV = ev.snap, ev.rv
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

// latest is the state after the last event.
func (h *history) latest() *tree {
	if ev := h.live(); len(ev) > 0 {
		return ev[len(ev)-1].snap
	}
	return h.base
}

// snapshotAt returns the state at revision rv, which must not be newer
// than the cache. ok is false if rv is older than the history.
func (h *history) snapshotAt(rv uint64) (*tree, bool) {
	if rv < h.oldest() {
		return nil, false
	}
	ev := h.live()
	i := sort.Search(len(ev), func(i int) bool { return ev[i].rv > rv })
	if i == 0 {
		return h.base, true
	}
	return ev[i-1].snap, true
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
