package filters

import (
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WithPanicRecovery turns a panic in a handler into a 500 Status and a log
// line, so one bad request never takes the server down.
func WithPanicRecovery(logger *slog.Logger) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				rec := recover()
				if rec == nil {
					return
				}
				if err, ok := rec.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(rec) // net/http's way of aborting a response
				}
				logger.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "panic", rec, "stack", string(debug.Stack()))
				writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError,
					"Internal error occurred: the server panicked while handling the request")
			}()
			h.ServeHTTP(w, r)
		})
	}
}
