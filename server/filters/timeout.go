package filters

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/warning"
)

// LongRunning reports whether a request may outlive the request timeout:
// watches and streaming subresources.
func LongRunning(info *request.Info) bool {
	if info == nil {
		return false
	}
	if info.Verb == "watch" {
		return true
	}
	switch info.Subresource {
	case "proxy", "log", "exec", "attach", "portforward":
		return true
	}
	return false
}

// WithTimeout ends a request that runs past timeout with a 504 Status.
// Writes pass straight through to the client; once the time is up the
// handler's later writes are dropped, and a response already under way is
// aborted rather than finished with a second status. Long-running requests
// are not limited here.
func WithTimeout(timeout time.Duration) Filter {
	workers := NewWorkers()
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, _ := request.InfoFrom(r.Context())
			if LongRunning(info) || timeout <= 0 {
				h.ServeHTTP(w, r)
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			run := &timeoutRun{tw: timeoutWriter{w: w, header: http.Header{}}, done: make(chan struct{})}
			tw := &run.tw
			workers.Run(func() {
				defer func() {
					run.panicked = recover()
					close(run.done)
				}()
				// The warning recorder (WithWarningRecorder, next in the
				// chain) rides on this request copy: one copy, not two.
				h.ServeHTTP(tw, r.WithContext(warning.WithHeader(ctx, tw.Header())))
			})
			select {
			case <-run.done:
				if run.panicked != nil {
					panic(run.panicked)
				}
			case <-ctx.Done():
				if tw.timeOut() {
					panic(http.ErrAbortHandler)
				}
				metrics.Terminated(r.Context(), http.StatusGatewayTimeout)
				writeStatus(w, http.StatusGatewayTimeout, metav1.StatusReasonTimeout,
					fmt.Sprintf("Timeout: request did not complete within the allotted timeout of %s", timeout))
			}
		})
	}
}

// timeoutRun is one request's handler run by the timeout filter: one
// allocation for what the filter and the worker share.
type timeoutRun struct {
	tw       timeoutWriter
	done     chan struct{} // closed when the handler returned
	panicked any           // the handler's panic; set before done is closed
}

// timeoutWriter passes writes through until the request times out. The
// handler sets headers in a map of its own, added to the real one when
// the response starts: after a timeout, the timeout answer owns the real
// headers while the handler may still be setting its own. The handler's
// map starts empty (the headers set before, such as Audit-ID, stay in the
// real one): copying them cost more than the rest of the filter.
type timeoutWriter struct {
	w        http.ResponseWriter
	header   http.Header // the handler's
	mu       sync.Mutex  // guards the fields below
	wrote    bool
	timedOut bool
}

func (t *timeoutWriter) Header() http.Header { return t.header }

// startLocked sends the handler's headers with the response's first bytes.
func (t *timeoutWriter) startLocked() {
	if t.wrote {
		return
	}
	t.wrote = true
	real := t.w.Header()
	for k, v := range t.header {
		real[k] = v
	}
}

func (t *timeoutWriter) WriteHeader(code int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timedOut || t.wrote {
		return
	}
	t.startLocked()
	t.w.WriteHeader(code)
}

func (t *timeoutWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	t.startLocked()
	return t.w.Write(p)
}

// Flush lets streaming handlers flush through the timeout writer.
func (t *timeoutWriter) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f, ok := t.w.(http.Flusher); ok && !t.timedOut {
		t.startLocked()
		f.Flush()
	}
}

// Hijack hands the connection to a handler that switches protocols (an
// upgrade an aggregated server accepted): the connection is the handler's
// from then on, and a time-out no longer writes to it. It counts as a
// response started, so a time-out aborts rather than answers.
func (t *timeoutWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timedOut {
		return nil, nil, http.ErrHandlerTimeout
	}
	t.startLocked()
	return http.NewResponseController(t.w).Hijack()
}

// timeOut stops further writes and reports whether a response had started.
func (t *timeoutWriter) timeOut() (started bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timedOut = true
	return t.wrote
}
