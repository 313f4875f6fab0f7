package cache

import (
	"context"
	"sync"
	"time"
)

// revisionFetchTimeout bounds one read of the backend's current revision;
// the reads that share it wait no longer, then go to the backend.
const revisionFetchTimeout = 10 * time.Second

// revisionBatcher shares reads of the backend's current revision among
// concurrent consistent reads. A consistent read needs a revision read
// after it arrived: one read before could miss a write acknowledged in
// between. So a read that arrives while a fetch is in flight does not
// take that fetch's answer; it waits for the next fetch, which starts
// when the one in flight ends, and every read that arrived in the
// meantime shares that next fetch. Under load the backend sees one
// revision read at a time, whatever the number of readers.
type revisionBatcher struct {
	fetch func(context.Context) (uint64, error)

	mu      sync.Mutex    // guards the fields below
	running *revisionCall // the fetch in flight, if any
	next    *revisionCall // the fetch after it, which readers arriving now share
}

// revisionCall is one fetch and the readers that share its answer.
type revisionCall struct {
	done    chan struct{} // closed once rv and err are set
	rv      uint64
	err     error
	readers int // how many share it; guarded by revisionBatcher.mu
}

func newRevisionBatcher(fetch func(context.Context) (uint64, error)) *revisionBatcher {
	return &revisionBatcher{fetch: fetch}
}

// current returns a revision of the backend read after current was
// called, or the error of that read, or ctx's if it ends first.
func (b *revisionBatcher) current(ctx context.Context) (uint64, error) {
	call := b.join()
	select {
	case <-call.done:
		return call.rv, call.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// join returns the call whose fetch starts after now, starting it if no
// fetch is in flight.
func (b *revisionBatcher) join() *revisionCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	var call *revisionCall
	switch {
	case b.running == nil:
		call = &revisionCall{done: make(chan struct{})}
		b.running = call
		go b.run(call)
	case b.next == nil:
		call = &revisionCall{done: make(chan struct{})}
		b.next = call
	default:
		call = b.next
	}
	call.readers++
	return call
}

// run fetches for call, then for the calls that queued up meanwhile,
// one after the other, until none waits.
func (b *revisionBatcher) run(call *revisionCall) {
	for call != nil {
		// Not a reader's context: the answer is shared, so no one
		// reader's cancellation may end it.
		ctx, cancel := context.WithTimeout(context.Background(), revisionFetchTimeout)
		call.rv, call.err = b.fetch(ctx)
		cancel()
		close(call.done)
		b.mu.Lock()
		call, b.next = b.next, nil
		b.running = call
		b.mu.Unlock()
	}
}
