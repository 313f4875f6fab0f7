package parallel

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestDoCallsEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{{0, 4}, {1, 4}, {10, 1}, {10, 3}, {10, 0}, {3, 10}} {
		t.Run(fmt.Sprintf("n=%d,limit=%d", tc.n, tc.limit), func(t *testing.T) {
			calls := make([]atomic.Int32, tc.n)
			work := make([]func() error, tc.n)
			for i := range work {
				work[i] = func() error { calls[i].Add(1); return nil }
			}
			if err := Do(tc.limit, work...); err != nil {
				t.Fatalf("Do: %v", err)
			}
			for i := range calls {
				if got := calls[i].Load(); got != 1 {
					t.Errorf("index %d called %d times, want 1", i, got)
				}
			}
		})
	}
}

func TestDoBoundsConcurrency(t *testing.T) {
	const limit = 3
	var running, peak atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	done := make(chan error)
	go func() {
		work := make([]func() error, 10)
		for i := range work {
			work[i] = func() error {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				started <- struct{}{}
				<-release
				running.Add(-1)
				return nil
			}
		}
		done <- Do(limit, work...)
	}()
	for range limit {
		<-started
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Do: %v", err)
	}
	if p := peak.Load(); p != limit {
		t.Errorf("peak concurrency %d, want %d", p, limit)
	}
}

func TestDoJoinsErrorsInIndexOrder(t *testing.T) {
	errA, errB := errors.New("a"), errors.New("b")
	ok := func() error { return nil }
	err := Do(5, ok, func() error { return errA }, ok, func() error { return errB }, ok)
	if !errors.Is(err, errA) || !errors.Is(err, errB) {
		t.Fatalf("Do = %v, want both errors", err)
	}
	if got, want := err.Error(), "a\nb"; got != want {
		t.Errorf("Do = %q, want %q", got, want)
	}
}
