package cache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

const (
	// listPageSize is the page size of the lists that fill the cache.
	listPageSize = 10000
	// retryPeriod is how long Run waits before it lists or watches again
	// after a failure.
	retryPeriod = time.Second
	// tickPeriod is how often Run sends due bookmarks and forgets old
	// history.
	tickPeriod = time.Second
)

// cacheStreams numbers the caches' watch streams: two caches of one
// resource (a custom resource's served versions) get one each.
var cacheStreams atomic.Uint64

// errRelist ends a watch that cannot go on from the cache's revision.
var errRelist = errors.New("the backend's history no longer reaches the cache's revision")

// Run lists the backend, then watches it and keeps the cache current,
// until ctx ends. It relists when the watch cannot resume (the backend
// compacted past the cache), which ends every watcher as kube does. Every
// event is applied and dispatched by Run's goroutine, in order. Run is
// called once; when it returns, every watcher has ended and the cache
// passes every call to the backend.
func (c *Cacher) Run(ctx context.Context) {
	// A backend watch stream of the cache's own, for its watch and its
	// progress requests: progress on a stream shared with other watches
	// can run ahead of this watch's events (see storage.WithWatchStream).
	ctx = storage.WithWatchStream(ctx, c.resourcePrefix+"#"+strconv.FormatUint(cacheStreams.Add(1), 10))
	ticker := c.clock.NewTicker(tickPeriod)
	defer ticker.Stop()
	go c.backend.progress.run(ctx)
	defer c.stop()
	for ctx.Err() == nil {
		err := c.listAndWatch(ctx, ticker.C())
		if ctx.Err() != nil {
			return
		}
		c.logger.Warn("watch cache reinitializing", "err", err)
		c.setUnready(err)
		select {
		case <-ctx.Done():
		case <-c.clock.After(retryPeriod):
		}
	}
}

// listAndWatch fills the cache from a list, then applies the watch's
// events until the watch cannot resume.
func (c *Cacher) listAndWatch(ctx context.Context, tick <-chan time.Time) error {
	began := c.clock.Now()
	state, rv, err := c.list(ctx)
	c.backend.metrics.Initialized(began, err)
	if err != nil {
		return fmt.Errorf("listing: %w", err)
	}
	c.replace(state, rv)
	for {
		err := c.watch(ctx, tick)
		if ctx.Err() != nil || errors.Is(err, errRelist) {
			return err
		}
		c.logger.Warn("watch cache resuming its watch", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.clock.After(retryPeriod):
		}
	}
}

// list reads every object of the resource, in pages at one revision.
func (c *Cacher) list(ctx context.Context) (*tree, uint64, error) {
	state := newTree()
	opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: listPageSize}}
	var rv uint64
	for {
		list := c.newListFunc()
		if err := c.backend.storage.GetList(ctx, c.resourcePrefix, opts, list); err != nil {
			return nil, 0, err
		}
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return nil, 0, err
		}
		if rv == 0 {
			if rv, err = storage.ParseResourceVersion(lm.GetResourceVersion()); err != nil || rv == 0 {
				return nil, 0, fmt.Errorf("list has resourceVersion %q", lm.GetResourceVersion())
			}
		}
		// Items get their own allocations: a list's array is not kept
		// alive by the few of its objects that stay unchanged.
		items, err := meta.ExtractListWithAlloc(list)
		if err != nil {
			return nil, 0, err
		}
		for _, obj := range items {
			key, err := c.keyFunc(obj)
			if err != nil {
				return nil, 0, err
			}
			e, err := c.newElement(key, obj)
			if err != nil {
				return nil, 0, err
			}
			state.ReplaceOrInsert(e)
		}
		if lm.GetContinue() == "" {
			return state, rv, nil
		}
		opts.Predicate.Continue = lm.GetContinue()
	}
}

// watch applies the events of one watch from the cache's revision, and
// does the periodic work on each tick, until the watch ends.
func (c *Cacher) watch(ctx context.Context, tick <-chan time.Time) error {
	c.mu.RLock()
	from := c.rv
	c.mu.RUnlock()
	w, err := c.backend.storage.Watch(ctx, c.resourcePrefix, storage.ListOptions{
		ResourceVersion: formatRV(from), Recursive: true, ProgressNotify: true, RecordTimes: true})
	if err != nil {
		if errors.Is(err, storage.ErrExpired) {
			return fmt.Errorf("%w: %w", errRelist, err)
		}
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			c.tick()
		case e, ok := <-w.ResultChan():
			if !ok {
				return errors.New("watch closed")
			}
			if err := c.handle(e); err != nil {
				return err
			}
		}
	}
}

// handle applies one event of the backend's watch.
func (c *Cacher) handle(e watch.Event) error {
	switch e.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		return c.apply(e)
	case watch.Bookmark:
		rv, err := objectRV(e.Object)
		if err != nil {
			return err
		}
		c.progressed(rv)
		return nil
	case watch.Error:
		if s, ok := e.Object.(*metav1.Status); ok {
			if s.Code == http.StatusGone {
				return fmt.Errorf("%w: %s", errRelist, s.Message)
			}
			return fmt.Errorf("watch error: %s", s.Message)
		}
		return fmt.Errorf("watch error: %v", e.Object)
	}
	return fmt.Errorf("unexpected watch event %q", e.Type)
}

// apply applies a change to the state and the history, and dispatches it.
func (c *Cacher) apply(e watch.Event) error {
	var decoded time.Time
	e.Object, decoded = storage.Untimed(e.Object)
	key, err := c.keyFunc(e.Object)
	if err != nil {
		return err
	}
	rv, err := objectRV(e.Object)
	if err != nil {
		return err
	}
	c.mu.RLock()
	current := c.rv
	c.mu.RUnlock()
	if rv <= current { // c.rv changes on this goroutine only
		c.logger.Warn("watch cache ignoring an event older than its revision", "key", key, "rv", rv, "cacheRV", current)
		return nil
	}
	elem, err := c.newElement(key, e.Object)
	if err != nil {
		return err
	}
	ev := &event{typ: e.Type, key: key, elem: elem, rv: rv, at: c.clock.Now(), decoded: decoded}
	// The object as the watch decoded it, for the watchers that take it
	// before it is collected.
	ev.shared.get(elem.data != nil, func() *sharedObject { return newSharedObject(e.Object) })
	c.mu.Lock()
	c.hist.record(ev)
	c.setRVLocked(rv)
	c.run.targets = c.watchers.forKey(key, c.run.targets[:0])
	c.mu.Unlock()
	c.backend.metrics.Received()
	c.dispatch(ev, c.run.targets)
	// The slots would keep the watchers alive after their watches end
	// (their channels, contexts and unread events) until an event with as
	// many watchers reuses them.
	clear(c.run.targets)
	c.backend.metrics.Dispatched()
	return nil
}

// replace makes state at revision rv the cache's, and the cache ready.
func (c *Cacher) replace(state *tree, rv uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hist.reset(state, rv)
	c.status.ready, c.status.lastErr = true, nil
	c.setRVLocked(rv)
	c.logger.Debug("watch cache ready", "rv", rv, "objects", state.Len())
}

// setUnready ends every watcher: the cache lost track of the backend.
func (c *Cacher) setUnready(err error) {
	c.mu.Lock()
	c.status.ready, c.status.lastErr = false, err
	c.notifyLocked()
	ws := c.watchers.removeAll()
	c.mu.Unlock()
	for _, w := range ws {
		w.terminate()
	}
}

// stop ends every watcher when Run returns; the cache then passes every
// call to the backend.
func (c *Cacher) stop() {
	c.setUnready(errors.New("stopped"))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status.stopped = true
	c.notifyLocked()
}
