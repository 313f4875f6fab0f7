package cache

import (
	goruntime "runtime"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// The hand-off of a watcher's live events between Run's goroutine and the
// watcher's own. A watcher is in one of three states; handoff.mu guards the
// moves, every send to input and every send to result by Run's goroutine,
// so that result is closed only when no send is under way.
//
//	state       direct closed  sends to result, owns sender  moves on
//	forwarding  false  false   the watcher's goroutine       to direct: becomeDirect, input empty
//	direct      true   false   Run's goroutine (offer)       to forwarding: offer, result full
//	closed      -      true    nobody                        never (finish)
//
// A watcher starts forwarding: its goroutine sends the initial events and
// the backlog first, while Run's goroutine queues the live events in input.
// A watcher whose input is full too is closed (closeSlow).

// handoff is the state of the hand-off, guarded by mu.
type handoff struct {
	mu     sync.Mutex
	input  chan *event // the events the goroutine forwards
	direct bool        // Run's goroutine sends to result
	closed bool        // result is closed
}

// sender is owned by whichever goroutine sends to result: Run's while the
// watcher is direct, else the watcher's; the move under handoff.mu hands
// it over.
type sender struct {
	// sel evaluates the watch's predicate.
	sel *selector
	// sentRV: events up to this revision are sent or skipped.
	sentRV uint64
}

// forward delivers the events in input, making the watcher direct each
// time it is empty, until the watch ends.
func (w *cacheWatcher) forward() {
	for {
		select {
		case ev := <-w.input:
			if !w.deliverLive(ev) {
				return
			}
			continue
		default:
		}
		// Caught up.
		if !w.becomeDirect() {
			continue
		}
		select {
		case ev := <-w.input:
			if !w.deliverLive(ev) {
				return
			}
		case <-w.done:
			return
		case <-w.ctx.Done():
			return
		}
	}
}

// becomeDirect makes the watcher direct, unless an event comes to input
// first: false then, and the caller forwards it. Run's goroutine holds mu
// briefly, or while it waits for room in input; in that case it waits
// for this goroutine to take an event, not for mu. A watcher that gave up
// on mu at once stayed forwarding until the next event, and with no next
// event it never became direct.
func (w *cacheWatcher) becomeDirect() bool {
	for !w.mu.TryLock() {
		if len(w.input) > 0 {
			return false
		}
		goruntime.Gosched()
	}
	defer w.mu.Unlock()
	w.direct = len(w.input) == 0
	return w.direct
}

// finish ends the watch and closes result, once no send to it is under
// way.
func (w *cacheWatcher) finish() {
	w.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	close(w.result)
}

// offer hands ev to w: while w is direct and result has room, what ev
// means to the watch goes there; otherwise ev goes to input, for w's
// goroutine to forward, waiting for room there until timeout fires (not
// at all if timeout is nil). False if there was no room.
// Run's goroutine only.
func (w *cacheWatcher) offer(ev *event, timeout <-chan time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return true
	}
	if w.direct && len(w.result) < cap(w.result) {
		// Only this goroutine sends to result now: the send cannot block.
		if out, ok := w.meaning(ev); ok {
			w.result <- out
			if !ev.decoded.IsZero() && out.Type != watch.Bookmark {
				// A send with room takes no time worth a bucket: one
				// reading of the clock serves as built and sent.
				now := w.c.clock.Now()
				w.c.backend.metrics.Delivered(ev.decoded, ev.at, now, now)
			}
		}
		return true
	}
	// The reader lags (or the goroutine has not caught up yet): the
	// goroutine forwards what comes until it has.
	w.direct = false
	if timeout == nil {
		select {
		case w.input <- ev:
			return true
		default:
			return false
		}
	}
	select {
	case w.input <- ev:
		return true
	case <-w.done:
		return true
	case <-timeout:
		return false
	}
}

// closeSlow closes a watcher that does not keep up.
func (w *cacheWatcher) closeSlow() {
	w.mu.Lock()
	buffered, unread := len(w.input), len(w.result)
	w.mu.Unlock()
	w.c.logger.Info("closing a watcher that does not keep up",
		"key", w.key, "labels", w.pred.Label, "fields", w.pred.Field,
		"buffered", buffered, "unread", unread)
	w.Stop()
}
