package filters

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/capstan-io/capstan/request"
)

// WithRequestInfo parses the request's path into a request.Info that later
// filters and the router read from the context. A path kube cannot parse
// (/api/v1/watch) gets kube's plain-text 500.
func WithRequestInfo(parser *request.Parser) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			info, err := parser.Parse(r)
			if err != nil {
				msg := fmt.Sprintf("Internal Server Error: %q: failed to create RequestInfo: %v", r.RequestURI, err)
				http.Error(w, htmlEscaper.Replace(msg), http.StatusInternalServerError)
				return
			}
			h.ServeHTTP(w, r.WithContext(request.WithInfo(r.Context(), info)))
		})
	}
}

// htmlEscaper is what kube escapes in the plain-text errors that echo the
// request URI.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")
