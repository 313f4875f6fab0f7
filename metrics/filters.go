package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// requestFilterDuration is kube's time spent in each filter of the chain
// (authentication, audit, impersonation, priorityandfairness,
// authorization): from the filter's start to its call of the next one.
var requestFilterDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "apiserver_request_filter_duration_seconds",
	Help:    "Time each filter of the handler chain took before passing a request on, by filter.",
	Buckets: []float64{0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 5.0, 10.0, 15.0, 30.0},
}, []string{"filter"})

func init() { register(requestFilterDuration) }

// FilterTimer times one filter; its series is resolved once, when the
// chain is built.
type FilterTimer struct{ series prometheus.Observer }

// NewFilterTimer returns the timer of the filter name.
func NewFilterTimer(name string) FilterTimer {
	return FilterTimer{series: requestFilterDuration.WithLabelValues(name)}
}

// Started marks the filter's start for the request of ctx.
func (FilterTimer) Started(ctx context.Context) {
	if rq := from(ctx); rq != nil {
		rq.filterStart = time.Now()
	}
}

// Completed records the time since Started, once: a filter that answers
// the request itself never completes, as in kube.
func (t FilterTimer) Completed(ctx context.Context) {
	if rq := from(ctx); rq != nil && !rq.filterStart.IsZero() {
		t.series.Observe(time.Since(rq.filterStart).Seconds())
		rq.filterStart = time.Time{}
	}
}
