package filters

import (
	"context"
	"net/http"

	"github.com/capstan-io/capstan/request"
)

// WithLongRunningStop ends long-running requests (watches) when stop is
// done. At shutdown ordinary requests drain by themselves; watches never
// would.
func WithLongRunningStop(stop context.Context) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, _ := request.InfoFrom(r.Context())
			if !LongRunning(info) {
				h.ServeHTTP(w, r)
				return
			}
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			unregister := context.AfterFunc(stop, cancel)
			defer unregister()
			h.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
