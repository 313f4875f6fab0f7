package cache

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// cacheWatcher is one Watch served by the cache. While the watcher keeps
// up, Run's goroutine filters each event itself and puts what it means to
// the watch straight in result ("direct"): no goroutine wakes up between
// the cache and the watch's reader (with many watchers, that hand-off
// dominated the server's CPU). While its goroutine sends the initial
// events or the backlog, or when result is full, Run's goroutine puts the
// events in input instead, and the goroutine forwards them until it has
// caught up. A watcher whose input is full too is closed.
type cacheWatcher struct {
	c         *Cacher
	ctx       context.Context
	key       string // the prepared key: a collection's ends in "/"
	recursive bool
	pred      storage.SelectionPredicate
	bookmarks bool // the watch asked for bookmarks (ProgressNotify)
	objects   storage.ObjectSharing
	deadline  time.Time // the watch's deadline, if any
	result    chan watch.Event
	done      chan struct{} // closed when the watcher ends
	stopOnce  sync.Once
	// The fields above are fixed at start; each below has one owner.

	handoff                  // guarded by its mu (handoff.go)
	sender                   // owned by whoever sends to result (handoff.go)
	replay  replay           // set before the goroutine starts, then its own
	marks   bookmarkSchedule // guarded by c.mu
}

// replay is what a watcher's goroutine sends before the live events.
type replay struct {
	initial     *tree      // the state to send ADDED events from, if any
	endBookmark bool       // end the initial events with a bookmark
	storedKind  *fixedKind // of the initial events' storedObjects
	backlog     []*event   // the history events to replay first
}

// bookmarkSchedule is when a watcher last got a bookmark.
type bookmarkSchedule struct {
	lastBookmark   time.Time // the last bookmark queued, or the start
	bookmarked     bool      // a bookmark was queued
	bookmarkRV     uint64    // the revision of the last bookmark queued
	progressSeen   uint64    // Cacher.progressScan.seq at the last bookmark
	deadlineMarked bool      // the bookmark before the deadline was queued
}

var _ watch.Interface = (*cacheWatcher)(nil)

// ResultChan returns the events; it is closed when the watch ends.
func (w *cacheWatcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch; the result channel closes soon after.
func (w *cacheWatcher) Stop() {
	w.c.removeWatcher(w)
	w.terminate()
}

func (w *cacheWatcher) terminate() { w.stopOnce.Do(func() { close(w.done) }) }

func (c *Cacher) removeWatcher(w *cacheWatcher) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watchers.remove(w)
}

// run sends the initial events or the backlog, then forwards the live
// events whenever the watcher is not direct, and closes result when the
// watch ends.
func (w *cacheWatcher) run() {
	defer w.finish()
	if w.replay.initial != nil && (!w.sendInitial() || w.replay.endBookmark && !w.send(w.bookmark(w.sentRV, true))) {
		return
	}
	w.replay.initial = nil
	for _, ev := range w.replay.backlog {
		if !w.deliver(ev) {
			return
		}
	}
	w.replay.backlog = nil
	storage.WatchInitialized(w.ctx)
	w.forward()
}

// sendInitial sends an ADDED event per selected object of w.replay.initial.
func (w *cacheWatcher) sendInitial() bool {
	ok := true
	each := func(e *element) bool {
		obj, err := w.initialObject(e)
		if err != nil {
			w.c.logger.Error("watch cache skipping an object", "key", e.key, "err", err)
			return true
		}
		if obj != nil {
			ok = w.send(watch.Event{Type: watch.Added, Object: obj})
		}
		return ok
	}
	if w.recursive {
		ascendPrefix(w.replay.initial, w.key, w.key, each)
	} else if e, found := get(w.replay.initial, w.key); found {
		each(e)
	}
	return ok
}

// deliver sends what ev means to this watch, if anything; false if the
// watch has ended.
func (w *cacheWatcher) deliver(ev *event) bool {
	out, ok := w.meaning(ev)
	return !ok || w.send(out)
}

// deliverLive is deliver for a live event, which is timed on its way
// (kube's dispatch stages; the history replayed first is not, as kube
// does not time its initial events).
func (w *cacheWatcher) deliverLive(ev *event) bool {
	out, ok := w.meaning(ev)
	if !ok {
		return true
	}
	if ev.decoded.IsZero() || out.Type == watch.Bookmark {
		return w.send(out)
	}
	built := w.c.clock.Now()
	if !w.send(out) {
		return false
	}
	w.c.backend.metrics.Delivered(ev.decoded, ev.at, built, w.c.clock.Now())
	return true
}

// meaning is the event ev makes for this watch, if any; it moves sentRV.
func (w *cacheWatcher) meaning(ev *event) (watch.Event, bool) {
	if ev.rv <= w.sentRV {
		return watch.Event{}, false
	}
	w.sentRV = ev.rv
	if ev.typ == watch.Bookmark {
		return w.bookmark(ev.rv, false), true
	}
	if !w.inScope(ev.key) {
		return watch.Event{}, false
	}
	return w.transform(ev)
}

// transform makes the event the predicate sees: an object entering the
// selection is ADDED, one leaving it DELETED (its last selected state, at
// the revision of the change), as in kube. Objects are decoded only when
// the kept attributes cannot tell whether they are selected, or when they
// are sent.
func (w *cacheWatcher) transform(ev *event) (watch.Event, bool) {
	cur, err := w.selectsState(ev.elem, &ev.shared)
	if err != nil {
		return w.drop(ev, err)
	}
	old := false
	if ev.prev != nil && ev.typ != watch.Deleted {
		if old, err = w.selectsState(ev.prev, &ev.prevShared); err != nil {
			return w.drop(ev, err)
		}
	}
	switch {
	case ev.typ == watch.Deleted:
		if cur {
			return w.eventOf(ev, watch.Deleted)
		}
	case cur && old:
		return w.eventOf(ev, watch.Modified)
	case cur:
		return w.eventOf(ev, watch.Added)
	case old:
		prev, err := w.c.prevObj(ev)
		if err != nil {
			return w.drop(ev, err)
		}
		obj, err := copyWithRV(prev, ev.rv)
		if err != nil {
			return w.drop(ev, err)
		}
		return watch.Event{Type: watch.Deleted, Object: obj}, true
	}
	return watch.Event{}, false
}

// eventOf is an event of type typ carrying ev's object.
func (w *cacheWatcher) eventOf(ev *event, typ watch.EventType) (watch.Event, bool) {
	shared, err := w.c.sharedObj(ev)
	if err != nil {
		return w.drop(ev, err)
	}
	return watch.Event{Type: typ, Object: w.objectOf(shared)}, true
}

// selectsState reports whether the watch selects e, a state of an event
// whose object is held in slot: by e's kept attributes, else by that
// object.
func (w *cacheWatcher) selectsState(e *element, slot *sharedSlot) (bool, error) {
	if selected, known := w.sel.byAttrs(e); known {
		return selected, nil
	}
	o, err := w.c.sharedOf(slot, e)
	if err != nil {
		return false, err
	}
	return w.matches(o.obj), nil
}

// drop drops ev, which err made unreadable.
func (w *cacheWatcher) drop(ev *event, err error) (watch.Event, bool) {
	w.c.logger.Error("watch cache dropping an event", "key", ev.key, "err", err)
	return watch.Event{}, false
}

// objectOf is an event's object as this watch receives it (w.objects).
func (w *cacheWatcher) objectOf(shared *sharedObject) runtime.Object {
	switch w.objects {
	case storage.EncodedObjects:
		return shared
	case storage.CachedObjects:
		return shared.obj
	}
	return shared.obj.DeepCopyObject()
}

// initialObject is e's object as an initial event of this watch carries
// it, nil if the watch does not select it: the cache's own to a
// CachedObjects watch; the element itself to an EncodedObjects watch in a
// cache that keeps objects encoded, decoded only if the predicate needs
// it, for the receiver to write its encoding as it is or decode it;
// else a copy.
func (w *cacheWatcher) initialObject(e *element) (runtime.Object, error) {
	selected, known := w.sel.byAttrs(e)
	if known && !selected {
		return nil, nil
	}
	stored := w.objects == storage.EncodedObjects && e.data != nil
	if stored && w.replay.storedKind == nil {
		w.replay.storedKind = storedKind(e.data)
	}
	if stored && known {
		return &storedObject{c: w.c, e: e, kind: w.replay.storedKind}, nil
	}
	obj, err := w.c.object(e)
	switch {
	case err != nil || !known && !w.matches(obj):
		return nil, err
	case stored:
		return &storedObject{c: w.c, e: e, kind: w.replay.storedKind}, nil
	case w.objects == storage.CachedObjects:
		return obj, nil
	}
	return obj.DeepCopyObject(), nil
}

func (w *cacheWatcher) inScope(key string) bool {
	if w.recursive {
		return strings.HasPrefix(key, w.key)
	}
	return key == w.key
}

func (w *cacheWatcher) matches(obj runtime.Object) bool { return matches(w.pred, obj) }

// bookmark is a BOOKMARK: an empty object carrying revision rv,
// annotated as the end of the initial events if asked.
func (w *cacheWatcher) bookmark(rv uint64, initialEventsEnd bool) watch.Event {
	obj := w.c.newFunc()
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(formatRV(rv))
		if initialEventsEnd {
			m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		}
	}
	return watch.Event{Type: watch.Bookmark, Object: obj}
}

// send delivers e unless the watch ends first.
func (w *cacheWatcher) send(e watch.Event) bool {
	select {
	case w.result <- e:
		return true
	case <-w.done:
		return false
	case <-w.ctx.Done():
		return false
	}
}
