package cache

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

const (
	// freshTimeout bounds how long a read waits for the cache to reach the
	// revision it needs before it goes to the backend (kube's 3s).
	freshTimeout = 3 * time.Second
	// progressRequestPeriod is how often the backend is asked for progress
	// while a read waits.
	progressRequestPeriod = 100 * time.Millisecond
)

// waitConsistent waits until the cache has seen a revision of the
// backend read after the call: it then holds every write acknowledged
// before the call. It returns false if the cache cannot get there (no
// progress requests: it would only learn of other resources' revisions
// at the backend's periodic notifications), or not within freshTimeout,
// and the caller goes to the backend.
func (c *Cacher) waitConsistent(ctx context.Context) (bool, error) {
	if c.backend.progress.request == nil {
		return false, nil
	}
	current, err := c.backend.revisions.current(ctx)
	if err != nil {
		return false, nil // the backend reports it
	}
	return c.waitFresh(ctx, current, false)
}

// freshNow tells whether the cache has already seen a revision of the
// backend read after the call, without waiting for it to get there: a
// consistent GET, which costs one round trip to the backend, must not wait
// for progress notifications that a slow watch on the same etcd stream can
// hold back for seconds. If the cache is behind, a progress request is
// sent, so that the reads after this one find it caught up.
//
// A cache known to be behind (older than backendReached: a write through
// it, or an earlier read, saw a newer revision) is not fresh, and no
// revision read is needed to tell: the GET then costs one round trip, as
// in kube, rather than two.
func (c *Cacher) freshNow(ctx context.Context) bool {
	if c.backend.progress.request == nil {
		return false
	}
	if c.knownBehind() {
		c.backend.progress.nudge()
		return false
	}
	current, err := c.backend.revisions.current(ctx)
	if err != nil {
		return false
	}
	c.mu.RLock()
	fresh := c.status.ready && current <= c.rv
	c.mu.RUnlock()
	if !fresh {
		c.backendAt(current)
		c.backend.progress.nudge()
	}
	return fresh
}

// knownBehind reports whether the cache has not yet seen a revision the
// backend is known to have reached.
func (c *Cacher) knownBehind() bool {
	reached := c.backendReached.Load()
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv < reached
}

// backendAt records that the backend has reached revision rv.
func (c *Cacher) backendAt(rv uint64) {
	for {
		old := c.backendReached.Load()
		if rv <= old || c.backendReached.CompareAndSwap(old, rv) {
			return
		}
	}
}

// waitFresh waits until the cache has seen revision rv. It returns false
// if the cache cannot serve rv within freshTimeout, or at all: the caller
// then goes to the backend, which knows best (it also reports a revision
// in the future). If checkFuture, a revision beyond the backend's current
// one is not waited for.
func (c *Cacher) waitFresh(ctx context.Context, rv uint64, checkFuture bool) (bool, error) {
	c.mu.RLock()
	current, ready := c.rv, c.status.ready
	c.mu.RUnlock()
	switch {
	case !ready:
		return false, nil
	case rv <= current:
		return true, nil
	}
	if checkFuture {
		if now, err := c.backend.revisions.current(ctx); err != nil || rv > now {
			return false, nil
		}
	}
	c.backend.progress.add()
	defer c.backend.progress.remove()
	timeout := c.clock.NewTimer(freshTimeout)
	defer timeout.Stop()
	for {
		c.mu.RLock()
		current, ready, changed := c.rv, c.status.ready, c.rvChanged
		c.mu.RUnlock()
		switch {
		case !ready:
			return false, nil
		case rv <= current:
			return true, nil
		}
		select {
		case <-changed:
		case <-timeout.C():
			c.logger.Info("watch cache did not catch up in time; reading from storage", "rv", rv, "cacheRV", current)
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// progressRequester asks the backend for progress notifications while
// some read waits for the cache to catch up: at once when a read starts
// waiting, then every progressRequestPeriod.
// Without one, the cache catches up with the revisions of other resources
// only at the backend's periodic notifications.
type progressRequester struct {
	request func(context.Context) error // nil: the backend cannot
	clock   clock.Clock
	logger  *slog.Logger
	wake    chan struct{} // a buffered signal that a read waits

	mu      sync.Mutex // guards waiting and nudged
	waiting int
	nudged  bool // one request asked for, with no read waiting
}

func newProgressRequester(request func(context.Context) error, clk clock.Clock, logger *slog.Logger) *progressRequester {
	return &progressRequester{request: request, clock: clk, logger: logger, wake: make(chan struct{}, 1)}
}

func (p *progressRequester) add() {
	p.mu.Lock()
	p.waiting++
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// nudge asks for one progress request, for reads that do not wait.
func (p *progressRequester) nudge() {
	p.mu.Lock()
	p.nudged = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *progressRequester) remove() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting--
}

// anyWaiting tells whether a request is wanted: a read waits, or one
// was nudged for (which this call takes).
func (p *progressRequester) anyWaiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	nudged := p.nudged
	p.nudged = false
	return p.waiting > 0 || nudged
}

// run requests progress while reads wait, until ctx ends. ctx must be the
// context of the cache's watch: see etcd3.Store.RequestWatchProgress.
func (p *progressRequester) run(ctx context.Context) {
	if p.request == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		for p.anyWaiting() {
			if err := p.request(ctx); err != nil && ctx.Err() == nil {
				p.logger.Debug("requesting watch progress", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-p.clock.After(progressRequestPeriod):
			case <-p.wake:
				// Another read started waiting: the answer to the last
				// request may predate the revision it needs.
			}
		}
	}
}
