package metrics

import (
	"sync/atomic"

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

// Executing counts a request that runs until the returned function is
// called.
func Executing(mutating bool) (done func()) {
	w := &executing[kindOf(mutating)]
	w.inc()
	return w.dec
}

// Queued counts a request that waits for its turn until the returned
// function is called.
func Queued(mutating bool) (done func()) {
	w := &waiting[kindOf(mutating)]
	w.inc()
	return w.dec
}
