package cache

import (
	"time"

	"k8s.io/utils/clock"
)

const (
	// maxBudget is the most time one event's dispatch may wait for
	// watchers whose buffers are full, and budgetRefill how much of it
	// comes back per second: a stalled watcher costs the others at most
	// 100ms now and 5% of the time in the long run, as in kube.
	maxBudget    = 100 * time.Millisecond
	budgetRefill = 50 * time.Millisecond
)

// timeBudget is the time dispatching may spend waiting for slow watchers
// before it closes them. Not safe for concurrent use.
type timeBudget struct {
	clock     clock.PassiveClock
	available time.Duration
	last      time.Time
}

func newTimeBudget(clk clock.PassiveClock) *timeBudget {
	return &timeBudget{clock: clk, last: clk.Now()}
}

// take returns all the time available, refilled since the last call.
func (b *timeBudget) take() time.Duration {
	now := b.clock.Now()
	refill := time.Duration(now.Sub(b.last).Seconds() * float64(budgetRefill))
	b.available = min(b.available+max(refill, 0), maxBudget)
	b.last = now
	t := b.available
	b.available = 0
	return t
}

// giveBack returns the part of a take that was not spent.
func (b *timeBudget) giveBack(unused time.Duration) {
	if unused > 0 {
		b.available = min(b.available+unused, maxBudget)
	}
}
