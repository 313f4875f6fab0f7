package filters

import (
	"log/slog"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authn"
)

// WithAuthentication authenticates each request and puts its user in the
// context. A request no authenticator accepts gets 401.
func WithAuthentication(auth authn.Authenticator, logger *slog.Logger) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			resp, ok, err := auth.AuthenticateRequest(r)
			if err != nil || !ok {
				if err != nil {
					logger.Debug("unable to authenticate the request", "err", err)
				}
				writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
				return
			}
			// Credentials stop here: nothing below should see them.
			r.Header.Del("Authorization")
			h.ServeHTTP(w, r.WithContext(authn.WithUser(r.Context(), resp.User)))
		})
	}
}
