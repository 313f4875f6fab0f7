package filters

import (
	"net/http"

	"github.com/capstan-io/capstan/endpoints/warning"
)

// WithWarningRecorder lets everything that serves the request, storage
// and the CRD and aggregation handlers included, raise Warning headers
// through its context (endpoints/warning). It runs inside the timeout
// filter, whose writer holds the headers until the response is written.
func WithWarningRecorder() Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(warning.WithHeader(r.Context(), w.Header())))
		})
	}
}
