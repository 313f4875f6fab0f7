package filters

import (
	"log/slog"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/metrics"
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
			start := time.Now()
			resp, ok, err := auth.AuthenticateRequest(r)
			metrics.Authentication(start, ok, err, userName(resp))
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
			if resp.User.Name == "system:apiserver" {
				metrics.SelfRequest(r.Context())
			}
			h.ServeHTTP(w, r.WithContext(authn.WithUser(r.Context(), resp.User)))
		})
	}
}

func userName(resp *authn.Response) string {
	if resp == nil || resp.User == nil {
		return ""
	}
	return resp.User.Name
}
