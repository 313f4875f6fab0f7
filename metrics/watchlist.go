package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// watchListDuration is kube's WatchList latency: from a request's arrival
// to the bookmark that ends its initial events.
var watchListDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name: "apiserver_watch_list_duration_seconds",
	Help: "Time from the arrival of a WatchList request to the end of its initial events, by group, version, resource and scope.",
	Buckets: []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
		4, 5, 6, 8, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300},
}, []string{"group", "version", "resource", "scope"})

func init() { register(watchListDuration) }

// WatchListSent records that the WatchList request of ctx has sent its
// initial events, labelled as the request is.
func WatchListSent(ctx context.Context) {
	rq := from(ctx)
	if rq == nil {
		return
	}
	l := rq.labels.Load()
	if l == nil {
		return
	}
	watchListDuration.WithLabelValues(l.Group, l.Version, l.Resource, l.Scope).Observe(time.Since(rq.start).Seconds())
}
