package filters

import (
	"log/slog"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
)

// WithAuthentication authenticates each request and puts its user in the
// context. A request no authenticator accepts gets 401, audited as kube
// audits it. Once authenticated, the request loses its credentials: the
// Authorization header, the standard front-proxy headers (X-Remote-*) and
// those of proxyHeaders (--requestheader-*), so that nothing below, a
// proxied backend included, sees them.
func WithAuthentication(auth authn.Authenticator, proxyHeaders authn.RequestHeaders, logger *slog.Logger) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			resp, ok, err := auth.AuthenticateRequest(r)
			if err != nil || !ok {
				if err != nil {
					logger.Debug("unable to authenticate the request", "err", err)
				}
				w = auditFailedAuthentication(w, r)
				writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized")
				return
			}
			for k, v := range resp.AuditAnnotations {
				audit.AddAnnotation(r.Context(), k, v)
			}
			r.Header.Del("Authorization")
			authn.StandardRequestHeaders.Clear(r.Header)
			proxyHeaders.Clear(r.Header)
			h.ServeHTTP(w, r.WithContext(authn.WithUser(r.Context(), resp.User)))
		})
	}
}
