package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// watermark counts requests of one kind at once, and the most seen since
// it was last read: kube's current_inflight_requests is the maximum of
// its last second, which a scrape between peaks would miss.
type watermark struct {
	now, max atomic.Int64
}

func (w *watermark) inc() {
	n := w.now.Add(1)
	for {
		m := w.max.Load()
		if n <= m || w.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (w *watermark) dec() { w.now.Add(-1) }

// read returns the maximum since the last read and starts a new one.
func (w *watermark) read() float64 {
	return float64(w.max.Swap(w.now.Load()))
}

// The request kinds of kube's in-flight gauges.
const (
	readOnlyKind = 0
	mutatingKind = 1
)

var (
	executing [2]watermark
	waiting   [2]watermark
)

func init() {
	for kind, label := range []string{"readOnly", "mutating"} {
		register(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name:        "apiserver_current_inflight_requests",
				Help:        "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
				ConstLabels: prometheus.Labels{"request_kind": label},
			}, executing[kind].read),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name:        "apiserver_current_inqueue_requests",
				Help:        "Maximal number of queued requests in this apiserver per request kind in last second.",
				ConstLabels: prometheus.Labels{"request_kind": label},
			}, waiting[kind].read))
	}
}

func kindOf(mutating bool) int {
	if mutating {
		return mutatingKind
	}
	return readOnlyKind
}

// readVsWrite are kube's read_vs_write_current_requests: the requests
// of each kind executing and waiting, over the server's limits, observed
// through time; each series under its own lock.
var readVsWrite = func() (r [2][2]*lockedRatio) { // [phase][kind]
	for kind, label := range []string{"readOnly", "mutating"} {
		for phase, name := range []string{"executing", "waiting"} {
			l := &lockedRatio{}
			l.r = newRatioSeries(apfReadVsWrite, &l.mu, name, label)
			r[phase][kind] = l
		}
	}
	return r
}()

const (
	executingPhase = 0
	waitingPhase   = 1
)

// lockedRatio is a ratio series with its own lock.
type lockedRatio struct {
	mu sync.Mutex
	r  *ratioSeries
}

func (l *lockedRatio) add(delta float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r.setLocked(time.Now(), l.r.num+delta)
}

func (l *lockedRatio) setDenominator(den float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r.setDenominatorLocked(time.Now(), den)
}

// Executing counts a request that runs until the returned function is
// called.
func Executing(mutating bool) (done func()) {
	return count(&executing[kindOf(mutating)], readVsWrite[executingPhase][kindOf(mutating)])
}

// Queued counts a request that waits for its turn until the returned
// function is called.
func Queued(mutating bool) (done func()) {
	return count(&waiting[kindOf(mutating)], readVsWrite[waitingPhase][kindOf(mutating)])
}

func count(w *watermark, r *lockedRatio) (done func()) {
	w.inc()
	r.add(1)
	return func() {
		w.dec()
		r.add(-1)
	}
}

// SetInflightLimits sets the limits read_vs_write_current_requests are
// ratios of: with API Priority and Fairness, the seats of all levels for
// executing requests and their queues' capacity for waiting ones, the
// same for both kinds; with max-in-flight limits, each kind's limit (and
// waiting requests over 1: none wait).
func SetInflightLimits(executingReadOnly, executingMutating, waitingLimit int) {
	readVsWrite[executingPhase][readOnlyKind].setDenominator(float64(executingReadOnly))
	readVsWrite[executingPhase][mutatingKind].setDenominator(float64(executingMutating))
	readVsWrite[waitingPhase][readOnlyKind].setDenominator(float64(waitingLimit))
	readVsWrite[waitingPhase][mutatingKind].setDenominator(float64(waitingLimit))
}
