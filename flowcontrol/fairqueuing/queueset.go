package fairqueuing

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// EstimatedServiceTime is what every request is assumed to take when it
// is dispatched; when it finishes, its queue is charged what it really
// took (kube uses the same 3ms).
const EstimatedServiceTime = 3 * time.Millisecond

// Clock tells the time and runs the release of lingering seats; tests
// pass a fake one.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) clock.Timer
}

// Width is what a request occupies: InitialSeats while it executes and,
// when a write has watchers to notify, FinalSeats held from dispatch and
// for AdditionalLatency after it finishes (kube's estimate of the work
// of sending its events). It runs on max(InitialSeats, FinalSeats).
type Width struct {
	InitialSeats, FinalSeats int
	AdditionalLatency        time.Duration
}

// Seats is the width the request runs on.
func (w Width) Seats() int { return max(w.InitialSeats, w.FinalSeats) }

// work is the request's estimated seat-seconds: its initial seats for
// the estimated service time, then its final seats while they linger.
func (w Width) work() float64 {
	return seatSeconds(w.InitialSeats, EstimatedServiceTime) + seatSeconds(w.FinalSeats, w.AdditionalLatency)
}

// Config is a queue set's configuration: its priority level's queuing
// parameters and its current concurrency limit in seats.
type Config struct {
	// Exempt sets have no limit: every request runs at once, counted only.
	Exempt bool
	// Queues is the number of queues; 0 means requests beyond the limit
	// are rejected rather than queued (limitResponse.type Reject).
	Queues int
	// HandSize is how many queues a flow is shuffle-sharded over.
	HandSize int
	// QueueLengthLimit is how many requests may wait in one queue.
	QueueLengthLimit int
	// ConcurrencyLimit is the number of seats requests may occupy.
	ConcurrencyLimit int
}

// QueueSet dispatches the requests of one priority level. Requests of a
// flow go to the shortest queue of the flow's hand; a free seat goes to
// the queue whose head would finish first in virtual time, the time of
// an ideal processor that serves every active queue at the same rate.
type QueueSet struct {
	clock Clock

	mu         sync.Mutex // guards the fields below
	cfg        Config
	dealer     Dealer
	queues     []*queue
	lastReal   time.Time // when virtualR was last advanced
	virtualR   float64   // virtual time, in seat-seconds served per queue
	robin      int       // the last queue dispatched from, to break ties
	enqueues   int       // rotates the start of the search of a hand
	active     int       // queues with requests waiting or executing
	seatsQueue int       // seats in use by requests that came from queues
	// queueless holds the executing requests of sets without queues
	// (exempt or rejecting levels), for the debug dump.
	queueless map[*Request]struct{}
	lingering int // finished requests whose final seats are still held
	stats     Stats
	demand    demandIntegrator
	observer  Observer
}

// Observer is told a queue set's counts and virtual time after every
// change, under the set's lock: kube's utilization histograms are fed
// from it.
type Observer interface {
	Note(waiting, executing, seatsInUse, seatsWaiting int, virtualR float64)
}

// SetObserver makes o the set's observer and tells it the current state.
func (qs *QueueSet) SetObserver(o Observer) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.observer = o
	qs.noteDemandLocked()
}

// Stats are a queue set's counters and gauges, as kube's debug dump has.
type Stats struct {
	Waiting, Executing, SeatsInUse, SeatsWaiting      int
	Dispatched, Rejected, TimedOut, Cancelled, Queues int
	ActiveQueues                                      int
}

// New returns an empty queue set; SetConfig configures it.
func New(clock Clock) *QueueSet {
	return &QueueSet{clock: clock, lastReal: clock.Now(), queueless: map[*Request]struct{}{}}
}

// SetConfig changes the configuration. Queues are added when there are
// more; extra ones are dropped once empty. Waiting requests are
// dispatched if the new limit lets them.
func (qs *QueueSet) SetConfig(cfg Config) error {
	var dealer Dealer
	if !cfg.Exempt && cfg.Queues > 0 {
		d, err := NewDealer(cfg.Queues, cfg.HandSize)
		if err != nil {
			return err
		}
		dealer = d
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTimeLocked()
	defer qs.noteDemandLocked()
	qs.cfg, qs.dealer = cfg, dealer
	for len(qs.queues) < cfg.Queues {
		qs.queues = append(qs.queues, newQueue())
	}
	qs.dropEmptyQueuesLocked()
	qs.dispatchLocked()
	return nil
}

// Config returns the current configuration.
func (qs *QueueSet) Config() Config {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.cfg
}

// Stats returns the current counters.
func (qs *QueueSet) Stats() Stats {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	s := qs.stats
	s.Queues, s.ActiveQueues = len(qs.queues), qs.active
	return s
}

// QueueStats describes one queue, for the debug dump.
type QueueStats struct {
	Index, Waiting, Executing, SeatsInUse int
	NextDispatchR                         float64
	WaitingSeats                          int
}

// QueueStats returns each queue's state.
func (qs *QueueSet) QueueStats() []QueueStats {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	out := make([]QueueStats, len(qs.queues))
	for i, q := range qs.queues {
		out[i] = QueueStats{Index: i, Waiting: q.length, Executing: q.executing, SeatsInUse: q.seatsInUse,
			NextDispatchR: q.nextDispatchR, WaitingSeats: q.waitingSeats}
	}
	return out
}

// ResetDemand returns the seat demand since the last call.
func (qs *QueueSet) ResetDemand() Demand {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTimeLocked()
	return qs.demand.reset(qs.lastReal)
}

// noteDemandLocked records the seats asked for after a change, and tells
// the observer.
func (qs *QueueSet) noteDemandLocked() {
	qs.demand.set(qs.lastReal, float64(qs.stats.SeatsInUse+qs.stats.SeatsWaiting))
	if qs.observer != nil {
		qs.observer.Note(qs.stats.Waiting, qs.stats.Executing, qs.stats.SeatsInUse, qs.stats.SeatsWaiting, qs.virtualR)
	}
}

// Start admits a request of the given width (seats) whose flow hashes to
// flowHash. It returns nil if the request is rejected: its queue is full
// while every seat is taken, or, without queues, no seat is free. A
// returned request may still be waiting: call Wait before serving it,
// and Finish after.
func (qs *QueueSet) Start(seats int, flowHash uint64) *Request {
	return qs.StartDescribed(Width{InitialSeats: seats}, flowHash, Descr{})
}

// StartDescribed is Start for a request of width w that the debug dump
// describes as d.
func (qs *QueueSet) StartDescribed(w Width, flowHash uint64, d Descr) *Request {
	w.InitialSeats = max(w.InitialSeats, 1)
	if w.FinalSeats <= 0 || w.AdditionalLatency <= 0 {
		w.FinalSeats, w.AdditionalLatency = 0, 0
	}
	seats := w.Seats()
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTimeLocked()
	defer qs.noteDemandLocked()
	r := &Request{qs: qs, width: w, seats: seats, work: w.work(), descr: d, arrived: qs.lastReal}
	if qs.cfg.Exempt || qs.cfg.Queues == 0 {
		if !qs.canAccommodateLocked(seats) {
			qs.stats.Rejected++
			return nil
		}
		qs.startExecutingLocked(r)
		return r
	}
	q := qs.shuffleShardLocked(flowHash)
	if qs.stats.SeatsInUse >= qs.cfg.ConcurrencyLimit && q.length >= qs.cfg.QueueLengthLimit {
		qs.stats.Rejected++
		return nil
	}
	qs.enqueueLocked(q, r)
	if qs.stats.Waiting == 1 && qs.canAccommodateLocked(seats) && qs.stats.SeatsInUse < qs.cfg.ConcurrencyLimit {
		// The common case, nobody else waiting: no need to look for the
		// earliest head among all queues.
		qs.dispatchFromLocked(q, -1)
		return r
	}
	qs.dispatchLocked()
	if r.state == waiting {
		r.ready = make(chan struct{})
	}
	return r
}

// shuffleShardLocked picks, from the flow's hand, the queue with the
// least work waiting; the search starts at a rotating offset so that
// ties spread over the hand.
func (qs *QueueSet) shuffleShardLocked(flowHash uint64) *queue {
	var buf [maxHandSize]int
	hand := qs.dealer.DealIntoHand(flowHash, buf[:])
	offset := qs.enqueues % len(hand)
	qs.enqueues++
	var best *queue
	for i := range hand {
		q := qs.queues[hand[(offset+i)%len(hand)]]
		if best == nil || q.waitingWork < best.waitingWork {
			best = q
		}
	}
	return best
}

// canAccommodateLocked: a request wider than the whole limit runs alone.
func (qs *QueueSet) canAccommodateLocked(seats int) bool {
	switch {
	case qs.cfg.Exempt:
		return true
	case seats > qs.cfg.ConcurrencyLimit:
		return qs.stats.Executing == 0
	}
	return qs.stats.SeatsInUse+seats <= qs.cfg.ConcurrencyLimit
}

// startExecutingLocked runs r; the time was just synced.
func (qs *QueueSet) startExecutingLocked(r *Request) {
	r.state, r.started = executing, qs.lastReal
	if q := r.queue; q != nil {
		q.executingSet[r] = struct{}{}
	} else {
		qs.queueless[r] = struct{}{}
	}
	qs.stats.Executing++
	qs.stats.SeatsInUse += r.seats
	qs.stats.Dispatched++
}

// syncTimeLocked advances virtual time: while queues are active, each is
// served at the rate of the seats in use (capped by the limit) shared
// equally among them.
func (qs *QueueSet) syncTimeLocked() {
	now := qs.clock.Now()
	elapsed := now.Sub(qs.lastReal)
	qs.lastReal = now
	if qs.active == 0 || elapsed <= 0 {
		return
	}
	demand := float64(min(qs.seatsQueue+qs.stats.SeatsWaiting, qs.cfg.ConcurrencyLimit))
	qs.virtualR += demand * elapsed.Seconds() / float64(qs.active)
}

func (qs *QueueSet) enqueueLocked(q *queue, r *Request) {
	if q.idle() {
		// An idle queue starts now: it has no credit from the past.
		q.nextDispatchR = qs.virtualR
		qs.active++
	}
	r.queue, r.arrivalR, r.state = q, qs.virtualR, waiting
	q.push(r)
	qs.stats.Waiting++
	qs.stats.SeatsWaiting += r.seats
	q.boundNextDispatch()
}

// dispatchLocked starts waiting requests while seats are free.
func (qs *QueueSet) dispatchLocked() {
	for qs.stats.Waiting > 0 && qs.stats.SeatsInUse < qs.cfg.ConcurrencyLimit {
		if !qs.dispatchOneLocked() {
			return
		}
	}
}

// dispatchOneLocked starts the head of the queue with the earliest
// virtual finish time, if its seats are free.
func (qs *QueueSet) dispatchOneLocked() bool {
	var best *queue
	var bestIndex int
	var bestFinish float64
	n := len(qs.queues)
	for i := 1; i <= n; i++ {
		index := (qs.robin + i) % n
		q := qs.queues[index]
		if q.head == nil {
			continue
		}
		if finish := q.nextDispatchR + q.head.work; best == nil || finish < bestFinish {
			best, bestIndex, bestFinish = q, index, finish
		}
	}
	if best == nil || !qs.canAccommodateLocked(best.head.seats) {
		return false
	}
	qs.dispatchFromLocked(best, bestIndex)
	return true
}

// dispatchFromLocked starts the head of q (at index, or -1 if unknown).
func (qs *QueueSet) dispatchFromLocked(best *queue, bestIndex int) {
	r := best.head
	best.remove(r)
	qs.stats.Waiting--
	qs.stats.SeatsWaiting -= r.seats
	if bestIndex >= 0 {
		qs.robin = bestIndex
	}
	if r.width.FinalSeats > qs.cfg.ConcurrencyLimit {
		// More final seats than the level has: as many as it has, for
		// longer, the same work (kube reshapes it so too).
		final := max(qs.cfg.ConcurrencyLimit, 1)
		total := seatSeconds(r.width.FinalSeats, r.width.AdditionalLatency)
		r.width.FinalSeats = final
		r.width.AdditionalLatency = time.Duration(total / float64(final) * float64(time.Second))
		r.seats = r.width.Seats()
	}
	best.nextDispatchR += r.work
	best.executing++
	best.seatsInUse += r.seats
	qs.seatsQueue += r.seats
	best.boundNextDispatch()
	qs.startExecutingLocked(r)
	if r.ready != nil {
		close(r.ready)
	}
}

// finishLocked ends r and charges its queue for the time r really took
// instead of the estimate. Its seats are given back now or, if it has
// final seats, once they have lingered for its additional latency.
func (qs *QueueSet) finishLocked(r *Request) {
	qs.syncTimeLocked()
	defer qs.noteDemandLocked()
	r.state = finished
	delete(qs.queueless, r)
	qs.stats.Executing--
	if q := r.queue; q != nil {
		actual := qs.lastReal.Sub(r.started)
		q.nextDispatchR += seatSeconds(r.width.InitialSeats, actual-EstimatedServiceTime)
		q.executing--
		delete(q.executingSet, r)
		q.boundNextDispatch()
		if q.idle() {
			qs.active--
		}
	}
	if r.width.AdditionalLatency > 0 {
		qs.lingering++
		qs.clock.AfterFunc(r.width.AdditionalLatency, func() {
			qs.mu.Lock()
			defer qs.mu.Unlock()
			qs.syncTimeLocked()
			defer qs.noteDemandLocked()
			qs.lingering--
			qs.releaseSeatsLocked(r)
		})
		return
	}
	qs.releaseSeatsLocked(r)
}

// releaseSeatsLocked gives r's seats back and dispatches what they let.
func (qs *QueueSet) releaseSeatsLocked(r *Request) {
	qs.stats.SeatsInUse -= r.seats
	if q := r.queue; q != nil {
		q.seatsInUse -= r.seats
		qs.seatsQueue -= r.seats
	}
	qs.dropEmptyQueuesLocked()
	qs.dispatchLocked()
}

// cancelLocked takes a waiting request out of its queue.
func (qs *QueueSet) cancelLocked(r *Request, timedOut bool) {
	qs.syncTimeLocked()
	defer qs.noteDemandLocked()
	q := r.queue
	q.remove(r)
	r.state = finished
	qs.stats.Waiting--
	qs.stats.SeatsWaiting -= r.seats
	qs.stats.Rejected++
	if timedOut {
		qs.stats.TimedOut++
	} else {
		qs.stats.Cancelled++
	}
	q.boundNextDispatch()
	if q.idle() {
		qs.active--
	}
	qs.dropEmptyQueuesLocked()
	// A wide request that left may unblock narrower ones behind it.
	qs.dispatchLocked()
}

// dropEmptyQueuesLocked removes idle queues past the configured number
// from the end (the ones a shrinking configuration left).
func (qs *QueueSet) dropEmptyQueuesLocked() {
	for n := len(qs.queues); n > qs.cfg.Queues && qs.queues[n-1].empty(); n-- {
		qs.queues = qs.queues[:n-1]
	}
	if qs.robin >= len(qs.queues) {
		qs.robin = 0
	}
}

func seatSeconds(seats int, d time.Duration) float64 {
	return float64(seats) * d.Seconds()
}

type requestState uint8

const (
	waiting requestState = iota + 1
	executing
	finished
)

// Request is one admitted request.
type Request struct {
	qs       *QueueSet
	queue    *queue // nil for sets without queues
	width    Width
	seats    int     // width.Seats()
	work     float64 // width.work()
	arrivalR float64
	started  time.Time
	descr    Descr
	arrived  time.Time
	state    requestState  // guarded by qs.mu
	ready    chan struct{} // closed when a waiting request is dispatched
	prev     *Request      // in its queue, guarded by qs.mu
	next     *Request      // in its queue, guarded by qs.mu
}

// Seats is the request's width.
func (r *Request) Seats() int { return r.seats }

// Queued reports whether the request waits in a queue, rather than
// having been dispatched when it started: only then does Wait block.
func (r *Request) Queued() bool { return r.ready != nil }

// Wait blocks until the request is dispatched (true) or ctx is done
// first (false: the request left its queue and must be rejected).
func (r *Request) Wait(ctx context.Context) bool {
	if r.ready == nil {
		return true
	}
	select {
	case <-r.ready:
		return true
	case <-ctx.Done():
	}
	qs := r.qs
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if r.state != waiting {
		return true // dispatched meanwhile: its seats are taken, run it
	}
	qs.cancelLocked(r, ctx.Err() == context.DeadlineExceeded)
	return false
}

// Finish returns the seats of a dispatched request. Call it exactly once
// after a Wait that returned true.
func (r *Request) Finish() {
	qs := r.qs
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if r.state == executing {
		qs.finishLocked(r)
	}
}
