package filters

import (
	"log/slog"
	"net/http"
	"time"
)

// WithHTTPLog logs every request once it is answered, as kube's httplog
// does at -v=3: verb, URI, latency, user agent, audit ID, source address
// and status. Off (nil) unless on.
func WithHTTPLog(logger *slog.Logger, on bool) Filter {
	if !on {
		return nil
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			// Read before serving: the handler below may still change the
			// request's headers on another goroutine once it has timed out.
			userAgent := r.UserAgent()
			lw := &metricsWriter{ResponseWriter: w}
			h.ServeHTTP(lw, r)
			logger.Info("HTTP", "verb", r.Method, "URI", r.RequestURI, "latency", time.Since(start),
				"userAgent", userAgent, "audit-ID", headerValue(w.Header(), auditIDKey), "srcIP", r.RemoteAddr, "resp", lw.code())
		})
	}
}
