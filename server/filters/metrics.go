package filters

import (
	"bufio"
	"net"
	"net/http"
	"time"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
)

// WithMetrics records every request a handler served, or the server
// terminated, in kube's request families (apiserver_request_total,
// _duration_seconds, _sli_duration_seconds, apiserver_response_sizes,
// apiserver_request_terminations_total). The labels are set by the
// handler that takes the request (metrics.Routed), so a path nothing
// serves adds no series.
func WithMetrics() Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, _ := request.InfoFrom(r.Context())
			if info == nil {
				h.ServeHTTP(w, r)
				return
			}
			ctx, rq := metrics.Start(r.Context(), time.Now())
			if !LongRunning(info) {
				defer metrics.Executing(mutatingVerbs[info.Verb])()
			}
			// Read before serving: a timed-out handler may still change
			// the request's headers on another goroutine.
			contentType := r.Header.Get("Content-Type")
			mw := &metricsWriter{ResponseWriter: w}
			h.ServeHTTP(mw, r.WithContext(ctx))
			rq.Done(r, contentType, info, mw.code(), mw.written)
		})
	}
}

// metricsWriter keeps the status code and the bytes written.
type metricsWriter struct {
	http.ResponseWriter
	status  int
	written int
}

func (m *metricsWriter) WriteHeader(code int) {
	if m.status == 0 {
		m.status = code
	}
	m.ResponseWriter.WriteHeader(code)
}

func (m *metricsWriter) Write(b []byte) (int, error) {
	if m.status == 0 {
		m.status = http.StatusOK
	}
	n, err := m.ResponseWriter.Write(b)
	m.written += n
	return n, err
}

func (m *metricsWriter) code() int {
	if m.status == 0 {
		return http.StatusOK
	}
	return m.status
}

// Flush lets watches flush through the writer.
func (m *metricsWriter) Flush() {
	if f, ok := m.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack passes an upgraded connection through.
func (m *metricsWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if m.status == 0 {
		m.status = http.StatusSwitchingProtocols
	}
	return http.NewResponseController(m.ResponseWriter).Hijack()
}

// Unwrap is for http.ResponseController.
func (m *metricsWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }
