// Package parallel runs independent calls at once, for start-up work such
// as the bootstrap objects written through the API, where each call mostly
// waits for an etcd commit and concurrent commits share one disk sync.
package parallel

import (
	"errors"
	"sync"
)

// Do calls every function of work, at most limit at a time (all at once
// for limit < 1), and returns their errors joined in work's order, so that
// the result does not depend on which call finished first.
func Do(limit int, work ...func() error) error {
	n := len(work)
	if limit < 1 || limit > n {
		limit = n
	}
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range limit {
		wg.Go(func() {
			for i := range next {
				errs[i] = work[i]()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}
