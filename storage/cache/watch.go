package cache

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// startPoint is where a watch starts.
type startPoint int

const (
	// fromState: ADDED events for the current state, then the changes.
	fromState startPoint = iota
	// fromRevision: the changes after a revision.
	fromRevision
	// fromNow: the changes after the cache's revision.
	fromNow
)

// Watch streams the changes under key with etcd3's semantics (see
// storage.ListOptions), from memory: "" and "0" (unless SendInitialEvents
// is false) start with an ADDED event per selected object, "" at a
// revision at least the backend's current one; N resumes after N if the
// history still has it, else the watch gets one 410 Expired error event.
// A watch the cache cannot serve (not ready, or "" when the cache cannot
// catch up within 3s) is the backend's.
func (c *Cacher) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	prepared, err := storage.PrepareKey(c.resourcePrefix, key, opts.Recursive)
	if err != nil {
		return nil, err
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	ctx, span := c.startSpan(ctx, "cacher.Watch")
	defer span.End()
	from, at, ok, err := c.planWatch(ctx, opts, rv)
	if err != nil {
		return nil, err
	}
	if !ok {
		return c.backend.storage.Watch(ctx, key, opts)
	}
	w := &cacheWatcher{
		c: c, ctx: ctx, key: prepared, recursive: opts.Recursive, pred: opts.Predicate, sender: sender{sel: c.selector(opts.Predicate)},
		bookmarks: opts.ProgressNotify, objects: opts.Objects, handoff: handoff{input: make(chan *event, c.watcherBuffer)},
		result: make(chan watch.Event, c.watcherBuffer), done: make(chan struct{}),
		// As in kube, only a client that takes bookmarks gets the one that
		// ends the initial events.
		replay: replay{endBookmark: opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.ProgressNotify},
	}
	w.deadline, _ = ctx.Deadline()
	if err := c.register(w, from, at); err != nil {
		if se := (*apierrors.StatusError)(nil); errors.As(err, &se) {
			return newErrWatcher(se), nil
		}
		return c.backend.storage.Watch(ctx, key, opts)
	}
	go w.run()
	return w, nil
}

// planWatch decides where a watch starts, waiting for the cache to be
// fresh enough where the API demands it; ok false sends it to the backend.
func (c *Cacher) planWatch(ctx context.Context, opts storage.ListOptions, rv uint64) (from startPoint, at uint64, ok bool, err error) {
	initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents ||
		opts.SendInitialEvents == nil && rv == 0
	switch {
	case opts.ResourceVersion == "" && initial:
		// The current state, at least as new as the backend's.
		current, err := c.backend.storage.CurrentResourceVersion(ctx)
		if err != nil {
			return 0, 0, false, nil
		}
		ok, err := c.waitFresh(ctx, current, false)
		return fromState, 0, ok, err
	case opts.ResourceVersion == "":
		current, err := c.backend.storage.CurrentResourceVersion(ctx)
		return fromRevision, current, err == nil, nil
	case initial:
		// "0", or N with SendInitialEvents: a state not older than N.
		ok, err := c.waitFresh(ctx, rv, true)
		return fromState, 0, ok, err
	case rv == 0:
		return fromNow, 0, true, nil
	}
	return fromRevision, rv, true, nil
}

// register files w with the cache, taking its initial state or backlog
// under the same lock, so that every event is either in them or
// dispatched to w, exactly once.
func (c *Cacher) register(w *cacheWatcher, from startPoint, at uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.status.ready {
		return fmt.Errorf("watch cache is not ready: %w", c.status.lastErr)
	}
	switch from {
	case fromState:
		w.replay.initial, w.sentRV = c.hist.latest(), c.rv
	case fromNow:
		w.sentRV = c.rv
	case fromRevision:
		backlog, err := c.hist.since(at)
		if err != nil {
			return apierrors.NewResourceExpired(err.Error())
		}
		w.replay.backlog, w.sentRV = backlog, at
	}
	w.marks.lastBookmark, w.marks.progressSeen = c.clock.Now(), c.progressScan.seq
	c.watchers.add(w)
	return nil
}

// errWatcher is a watch that only reports an error, as kube's cacher does
// for errors found after the request was accepted.
type errWatcher struct{ result chan watch.Event }

func newErrWatcher(err *apierrors.StatusError) *errWatcher {
	w := &errWatcher{result: make(chan watch.Event, 1)}
	status := err.Status()
	w.result <- watch.Event{Type: watch.Error, Object: &status}
	close(w.result)
	return w
}

func (w *errWatcher) ResultChan() <-chan watch.Event { return w.result }
func (w *errWatcher) Stop()                          {}
