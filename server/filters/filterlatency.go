package filters

import (
	"net/http"

	"github.com/capstan-io/capstan/metrics"
)

// WithFilterLatency times filter f in apiserver_request_filter_duration_seconds
// under name: from the request reaching f to f passing it on. A nil f
// (turned off) is left out.
func WithFilterLatency(name string, f Filter) Filter {
	if f == nil {
		return nil
	}
	timer := metrics.NewFilterTimer(name)
	return func(h http.Handler) http.Handler {
		inner := f(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			timer.Completed(r.Context())
			h.ServeHTTP(w, r)
		}))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			timer.Started(r.Context())
			inner.ServeHTTP(w, r)
		})
	}
}
