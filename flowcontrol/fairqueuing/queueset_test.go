package fairqueuing

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/clock"
)

// fakeClock moves only when a test steps it, and runs the funcs due by
// then, in order, on the test's goroutine.
type fakeClock struct {
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at   time.Time
	f    func()
	done bool
}

func (t *fakeTimer) C() <-chan time.Time { return nil }
func (t *fakeTimer) Stop() bool          { stopped := !t.done; t.done = true; return stopped }
func (t *fakeTimer) Reset(time.Duration) bool {
	panic("not used by the queue set")
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}
func (c *fakeClock) step(d time.Duration) {
	c.now = c.now.Add(d)
	slices.SortStableFunc(c.timers, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	for len(c.timers) > 0 && !c.timers[0].at.After(c.now) {
		t := c.timers[0]
		c.timers = c.timers[1:]
		if !t.done {
			t.done = true
			t.f()
		}
	}
}
func newClock() *fakeClock { return &fakeClock{now: time.Unix(1000, 0)} }
func (r *Request) dispatched() bool {
	r.qs.mu.Lock()
	defer r.qs.mu.Unlock()
	return r.state == executing
}

// flowHash returns a hash whose hand (of size 1) is queue i.
func flowHash(i int) uint64 { return uint64(i) }

func newSet(t *testing.T, clock Clock, cfg Config) *QueueSet {
	t.Helper()
	qs := New(clock)
	if err := qs.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return qs
}

// TestVirtualFinishOrder: a flow that arrives last is served before the
// backlog of a flow that just used a seat for a long time.
func TestVirtualFinishOrder(t *testing.T) {
	clock := newClock()
	qs := newSet(t, clock, Config{Queues: 8, HandSize: 1, QueueLengthLimit: 10, ConcurrencyLimit: 1})
	var a []*Request
	for range 4 {
		a = append(a, qs.Start(1, flowHash(0)))
	}
	b := qs.Start(1, flowHash(1))
	if !a[0].dispatched() || a[1].dispatched() || b.dispatched() {
		t.Fatalf("only the first request should run")
	}
	clock.step(time.Second)
	a[0].Finish()
	if !b.dispatched() || a[1].dispatched() {
		t.Fatalf("the other flow's request should run next")
	}
	b.Finish()
	if !a[1].dispatched() {
		t.Fatalf("then the first flow's")
	}
}

// TestSeatAccounting: wide requests take several seats; a head that
// does not fit waits while narrower heads with earlier virtual finish
// times pass it, and a request wider than the limit runs alone.
func TestSeatAccounting(t *testing.T) {
	clock := newClock()
	qs := newSet(t, clock, Config{Queues: 4, HandSize: 1, QueueLengthLimit: 10, ConcurrencyLimit: 4})
	steps := []struct {
		finish      []int // requests to finish first
		seats, flow int   // then a new request, if seats > 0
		wantRunning []bool
		wantSeats   int
	}{
		{nil, 3, 0, []bool{true}, 3},
		{nil, 2, 1, []bool{true, false}, 3},
		{nil, 1, 2, []bool{true, false, true}, 4},
		{[]int{0}, 9, 3, []bool{false, true, true, false}, 3},
		{[]int{2}, 1, 0, []bool{false, true, false, false, true}, 3},
		{[]int{1}, 1, 1, []bool{false, false, false, false, true, true}, 2},
		{[]int{4, 5}, 1, 0, []bool{false, false, false, true, false, false, false}, 9},
		{[]int{3}, 0, 0, []bool{false, false, false, false, false, false, true}, 1},
	}
	var reqs []*Request
	for i, s := range steps {
		for _, f := range s.finish {
			clock.step(time.Millisecond)
			reqs[f].Finish()
		}
		if s.seats > 0 {
			reqs = append(reqs, qs.Start(s.seats, flowHash(s.flow)))
		}
		for j, want := range s.wantRunning {
			if got := reqs[j].dispatched(); got != want {
				t.Errorf("step %d: request %d running %v, want %v", i, j, got, want)
			}
		}
		if got := qs.Stats().SeatsInUse; got != s.wantSeats {
			t.Errorf("step %d: %d seats in use, want %d", i, got, s.wantSeats)
		}
	}
}

func TestRejections(t *testing.T) {
	clock := newClock()
	t.Run("queue full", func(t *testing.T) {
		qs := newSet(t, clock, Config{Queues: 2, HandSize: 1, QueueLengthLimit: 2, ConcurrencyLimit: 1})
		for i := range 3 {
			if qs.Start(1, flowHash(0)) == nil {
				t.Fatalf("request %d rejected", i)
			}
		}
		if qs.Start(1, flowHash(0)) != nil {
			t.Fatal("a request past the queue length limit was queued")
		}
		if qs.Start(1, flowHash(1)) == nil {
			t.Fatal("another queue's request was rejected")
		}
		if s := qs.Stats(); s.Rejected != 1 || s.Waiting != 3 || s.Executing != 1 {
			t.Fatalf("stats %+v", s)
		}
	})
	t.Run("reject without queues", func(t *testing.T) {
		qs := newSet(t, clock, Config{ConcurrencyLimit: 2})
		r1, r2 := qs.Start(1, 0), qs.Start(1, 0)
		if r1 == nil || r2 == nil || qs.Start(1, 0) != nil {
			t.Fatal("want two admitted then a rejection")
		}
		r1.Finish()
		if qs.Start(1, 0) == nil {
			t.Fatal("a freed seat was not reused")
		}
	})
	t.Run("exempt", func(t *testing.T) {
		qs := newSet(t, clock, Config{Exempt: true})
		for range 100 {
			if r := qs.Start(5, 0); r == nil || !r.Wait(context.Background()) {
				t.Fatal("an exempt request waited or was rejected")
			}
		}
		if s := qs.Stats(); s.SeatsInUse != 500 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestWaitTimeout(t *testing.T) {
	clock := newClock()
	qs := newSet(t, clock, Config{Queues: 1, HandSize: 1, QueueLengthLimit: 5, ConcurrencyLimit: 1})
	first := qs.Start(1, 0)
	second := qs.Start(1, 0)
	third := qs.Start(1, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	if second.Wait(ctx) {
		t.Fatal("Wait returned true for a request that stayed queued")
	}
	if s := qs.Stats(); s.TimedOut != 1 || s.Waiting != 1 {
		t.Fatalf("stats %+v", s)
	}
	first.Finish()
	if !third.Wait(ctx) {
		t.Fatal("the request behind the timed-out one was not dispatched")
	}
	third.Finish()
	if s := qs.Stats(); s.Executing != 0 || s.SeatsInUse != 0 || s.ActiveQueues != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestFloodDoesNotStarve: one flow keeps its queues full while another
// sends one request at a time; the second gets half of the seat time.
func TestFloodDoesNotStarve(t *testing.T) {
	clock := newClock()
	qs := newSet(t, clock, Config{Queues: 64, HandSize: 4, QueueLengthLimit: 50, ConcurrencyLimit: 2})
	const flooder, polite = 0xfeed, 0xbeef
	var running, waiting []*Request
	var floodRejected int
	flood := func() {
		for {
			r := qs.Start(1, flooder)
			if r == nil {
				floodRejected++
				return
			}
			if r.dispatched() {
				running = append(running, r)
			} else {
				waiting = append(waiting, r)
			}
		}
	}
	flood()
	var politeRequest *Request
	politeServed := 0
	for step := 0; step < 400; step++ {
		if politeRequest == nil {
			politeRequest = qs.Start(1, polite)
			if politeRequest == nil {
				t.Fatalf("step %d: the polite flow was rejected", step)
			}
			if politeRequest.dispatched() {
				running = append(running, politeRequest)
			}
		}
		clock.step(100 * time.Millisecond)
		// Finish the oldest running request, then see who got its seat.
		done := running[0]
		running = running[1:]
		done.Finish()
		if done == politeRequest {
			politeServed++
			politeRequest = nil
		}
		for i := 0; i < len(waiting); {
			if waiting[i].dispatched() {
				running = append(running, waiting[i])
				waiting = append(waiting[:i], waiting[i+1:]...)
				continue
			}
			i++
		}
		if politeRequest != nil && politeRequest.dispatched() && !slices.Contains(running, politeRequest) {
			running = append(running, politeRequest)
		}
		flood()
	}
	if floodRejected == 0 {
		t.Fatal("the flood was never rejected")
	}
	// Fairness is among queues: the flood occupies the 4 queues of its
	// hand, the polite flow one, so the polite flow, which always has a
	// request waiting, gets about one dispatch in 5 (it would get none
	// in arrival order, the flood's queue being always longer).
	if politeServed < 400/5*9/10 {
		t.Fatalf("the polite flow was served %d times in 400 dispatches", politeServed)
	}
}

func TestDemand(t *testing.T) {
	clock := newClock()
	qs := newSet(t, clock, Config{Queues: 1, HandSize: 1, QueueLengthLimit: 5, ConcurrencyLimit: 1})
	qs.ResetDemand()
	r1 := qs.Start(1, 0)
	qs.Start(1, 0)
	qs.Start(1, 0) // demand 3 for 1s
	clock.step(time.Second)
	r1.Finish() // demand 2 for 1s
	clock.step(time.Second)
	d := qs.ResetDemand()
	if d.Max != 3 || d.Average != 2.5 || d.StdDev != 0.5 || d.Seconds != 2 {
		t.Fatalf("demand %+v", d)
	}
	if d := qs.ResetDemand(); d.Max != 2 {
		t.Fatalf("the next period starts at the current demand: %+v", d)
	}
}

// TestFinalSeatsLinger: a write with final seats runs on the wider of its
// initial and final seats, and after it finishes its final seats stay
// taken for its additional latency: a request waiting for them runs only
// then. Final seats beyond the limit are reshaped onto the limit, for
// proportionally longer.
func TestFinalSeatsLinger(t *testing.T) {
	clock := newClock()
	qs := newSet(t, clock, Config{Queues: 8, HandSize: 1, QueueLengthLimit: 10, ConcurrencyLimit: 2})
	write := qs.StartDescribed(Width{InitialSeats: 1, FinalSeats: 2, AdditionalLatency: 10 * time.Millisecond}, flowHash(0), Descr{})
	next := qs.Start(1, flowHash(1))
	if !write.dispatched() || next.dispatched() || qs.Stats().SeatsInUse != 2 {
		t.Fatalf("the write should take both seats: %+v", qs.Stats())
	}
	clock.step(time.Millisecond)
	write.Finish()
	if next.dispatched() || qs.Stats().SeatsInUse != 2 || qs.Stats().Executing != 0 {
		t.Fatalf("the write's final seats should linger: %+v", qs.Stats())
	}
	clock.step(9 * time.Millisecond)
	if next.dispatched() {
		t.Fatalf("the additional latency counts from the finish")
	}
	clock.step(time.Millisecond)
	if !next.dispatched() || qs.Stats().SeatsInUse != 1 {
		t.Fatalf("once they are given back the next request should run: %+v", qs.Stats())
	}
	next.Finish()

	wide := qs.StartDescribed(Width{InitialSeats: 1, FinalSeats: 5, AdditionalLatency: 10 * time.Millisecond}, flowHash(0), Descr{})
	if !wide.dispatched() || qs.Stats().SeatsInUse != 2 {
		t.Fatalf("final seats beyond the limit should be cut to it: %+v", qs.Stats())
	}
	if d := qs.Dump().Queues[0].Executing[0]; d.FinalSeats != 2 || d.AdditionalLatency != 25*time.Millisecond {
		t.Fatalf("reshaped width: %+v, want 2 final seats for 25ms", d.Width)
	}
	wide.Finish()
	clock.step(24 * time.Millisecond)
	if qs.Stats().SeatsInUse != 2 {
		t.Fatalf("still lingering: %+v", qs.Stats())
	}
	clock.step(time.Millisecond)
	if s := qs.Stats(); s.SeatsInUse != 0 || !qs.Dump().Idle {
		t.Fatalf("all given back: %+v", s)
	}
}
