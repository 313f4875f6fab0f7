package cache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/capstan-io/capstan/storage/etcd3"
)

// gatedFetch reads etcd's current revision, then holds the answer until
// the test releases it: the answer is then older than any write the test
// makes meanwhile, as a slow fetch's may be.
type gatedFetch struct {
	store   *etcd3.Store
	read    chan uint64   // each fetch sends the revision it read
	release chan struct{} // then waits for one of these
	mu      sync.Mutex
	calls   int
}

func newGatedFetch(s *etcd3.Store) *gatedFetch {
	return &gatedFetch{store: s, read: make(chan uint64), release: make(chan struct{})}
}

func (g *gatedFetch) fetch(ctx context.Context) (uint64, error) {
	g.mu.Lock()
	g.calls++
	g.mu.Unlock()
	rv, err := g.store.CurrentResourceVersion(ctx)
	g.read <- rv
	<-g.release
	return rv, err
}

type revisionResult struct {
	rv  uint64
	err error
}

func currentAsync(b *revisionBatcher) chan revisionResult {
	ch := make(chan revisionResult, 1)
	go func() {
		rv, err := b.current(context.Background())
		ch <- revisionResult{rv, err}
	}()
	return ch
}

// waitQueued waits until n readers share the fetch after the one in flight.
func waitQueued(t *testing.T, b *revisionBatcher, n int) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for {
		b.mu.Lock()
		queued := 0
		if b.next != nil {
			queued = b.next.readers
		}
		b.mu.Unlock()
		if queued == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d readers queued, want %d", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRevisionBatcherOrder: readers that arrive while a fetch is in flight
// never take its answer, which may predate a write acknowledged before
// they arrived; they share one fetch that starts after it.
func TestRevisionBatcherOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		during int // readers arriving after the write, while the first fetch is in flight
		calls  int // fetches made in all
	}{
		{"alone", 0, 1},
		{"one arrives during a fetch", 1, 2},
		{"many arrive during a fetch", 8, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			g := newGatedFetch(s)
			b := newRevisionBatcher(g.fetch)
			first := currentAsync(b)
			before := <-g.read // the first fetch has read etcd's revision
			written := rvOf(t, create(t, s, "order", "after-first-fetch").ResourceVersion)
			if written <= before {
				t.Fatalf("write at %d, not after the fetch's revision %d", written, before)
			}
			var later []chan revisionResult
			for range tc.during {
				later = append(later, currentAsync(b))
			}
			waitQueued(t, b, tc.during)
			g.release <- struct{}{}
			if r := <-first; r.err != nil || r.rv != before {
				t.Fatalf("first reader: %d, %v; want %d", r.rv, r.err, before)
			}
			if tc.during > 0 {
				<-g.read
				g.release <- struct{}{}
			}
			for i, ch := range later {
				if r := <-ch; r.err != nil || r.rv < written {
					t.Errorf("reader %d arrived after the write at %d and got %d, %v", i, written, r.rv, r.err)
				}
			}
			if g.calls != tc.calls {
				t.Errorf("%d fetches, want %d", g.calls, tc.calls)
			}
		})
	}
}

// TestRevisionBatcherSeesAcknowledgedWrites: under concurrent writes and
// reads on real etcd, a revision read after a write was acknowledged is
// never older than it.
func TestRevisionBatcherSeesAcknowledgedWrites(t *testing.T) {
	s := newTestStore(t)
	b := newRevisionBatcher(s.CurrentResourceVersion)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 20 {
				written := rvOf(t, create(t, s, "acked", fmt.Sprintf("w%d-%d", w, i)).ResourceVersion)
				rv, err := b.current(context.Background())
				if err != nil || rv < written {
					t.Errorf("revision %d (%v) after a write acknowledged at %d", rv, err, written)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestRevisionBatcherReaderLeaves: a reader whose context ends stops
// waiting; the fetch goes on for the others.
func TestRevisionBatcherReaderLeaves(t *testing.T) {
	s := newTestStore(t)
	g := newGatedFetch(s)
	b := newRevisionBatcher(g.fetch)
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() {
		_, err := b.current(ctx)
		left <- err
	}()
	rv := <-g.read
	other := currentAsync(b) // waits for the next fetch
	waitQueued(t, b, 1)
	cancel()
	if err := <-left; err != context.Canceled {
		t.Fatalf("canceled reader: %v", err)
	}
	g.release <- struct{}{}
	<-g.read
	g.release <- struct{}{}
	if r := <-other; r.err != nil || r.rv < rv {
		t.Fatalf("other reader: %d, %v; want at least %d", r.rv, r.err, rv)
	}
}
