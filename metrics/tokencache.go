package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The token cache families: kube's authentication token cache stats.
var (
	tokenCacheDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "authentication_token_cache_request_duration_seconds",
		Help: "Duration of token authentications through the token cache, by cache hit or miss.",
	}, []string{"status"})
	tokenCacheRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authentication_token_cache_request_total",
		Help: "Token authentications through the token cache, by cache hit or miss.",
	}, []string{"status"})
	tokenCacheFetches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authentication_token_cache_fetch_total",
		Help: "Token authentications the token cache asked of its authenticator, by result (ok or error).",
	}, []string{"status"})
	tokenCacheActive = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "authentication_token_cache_active_fetch_count",
		Help: "Token authentications in flight in the token cache (in_flight) and requests waiting for them (blocked).",
	}, []string{"status"})
)

func init() {
	register(tokenCacheDuration, tokenCacheRequests, tokenCacheFetches, tokenCacheActive)
}

// TokenCacheRequest records one authentication through the token cache,
// begun at start: a hit, or a miss that waited for a fetch.
func TokenCacheRequest(start time.Time, hit bool) {
	status := "miss"
	if hit {
		status = "hit"
	}
	tokenCacheRequests.WithLabelValues(status).Inc()
	// kube's resolution: whole milliseconds.
	tokenCacheDuration.WithLabelValues(status).Observe(float64(time.Since(start).Milliseconds()) / 1000)
}

// TokenCacheBlocked counts a miss waiting for a fetch until the returned
// function is called.
func TokenCacheBlocked() (done func()) {
	g := tokenCacheActive.WithLabelValues("blocked")
	g.Inc()
	return g.Dec
}

// TokenCacheFetching counts a fetch in flight until the returned function
// is called with its result.
func TokenCacheFetching() (done func(ok bool)) {
	g := tokenCacheActive.WithLabelValues("in_flight")
	g.Inc()
	return func(ok bool) {
		status := "error"
		if ok {
			status = "ok"
		}
		tokenCacheFetches.WithLabelValues(status).Inc()
		g.Dec()
	}
}
