package filters

import (
	"net/http"

	"github.com/capstan-io/capstan/request"
)

// WithRequestInfo parses the request's path into a request.Info that later
// filters and the router read from the context.
func WithRequestInfo(parser *request.Parser) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info := parser.Parse(r)
			h.ServeHTTP(w, r.WithContext(request.WithInfo(r.Context(), info)))
		})
	}
}
