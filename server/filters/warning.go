package filters

import (
	"net/http"

	"github.com/capstan-io/capstan/warning"
)

// WithWarningRecorder lets everything that serves the request, storage
// and the CRD and aggregation handlers included, raise Warning headers
// through its context (package warning). It runs inside the timeout
// filter, whose writer holds the headers until the response is written;
// the timeout filter sets the recorder up on its own copy of the request
// already, so this one copies the request only for requests the timeout
// filter leaves alone (long-running ones).
func WithWarningRecorder() Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ctx := warning.WithHeader(r.Context(), w.Header()); ctx != r.Context() {
				r = r.WithContext(ctx)
			}
			h.ServeHTTP(w, r)
		})
	}
}
