package filters

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/request"
)

// The audit annotations of the authorization decision.
const (
	decisionAnnotation = "authorization.k8s.io/decision"
	reasonAnnotation   = "authorization.k8s.io/reason"
)

// WithAuthorization lets a request through only if the authorizer allows
// it; otherwise it answers 403 with kube's message.
func WithAuthorization(a authz.Authorizer, logger *slog.Logger) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, _ := authn.UserFrom(r.Context())
			info, _ := request.InfoFrom(r.Context())
			start := time.Now()
			d, reason, err := a.Authorize(r.Context(), authz.Attributes{User: user, Info: info})
			metrics.Authorization(start, decisionLabel(d, err))
			if d == authz.Allow {
				audit.AddAnnotation(r.Context(), decisionAnnotation, "allow")
				audit.AddAnnotation(r.Context(), reasonAnnotation, reason)
				h.ServeHTTP(w, r)
				return
			}
			if err != nil {
				logger.Error("authorization failed", "err", err)
				audit.AddAnnotation(r.Context(), reasonAnnotation, "internal error")
			} else {
				audit.AddAnnotation(r.Context(), decisionAnnotation, "forbid")
				audit.AddAnnotation(r.Context(), reasonAnnotation, reason)
			}
			status := authz.Forbidden(authz.Attributes{User: user, Info: info}, reason).ErrStatus
			writeStatusObject(w, &status)
		})
	}
}

// decisionLabel is kube's result label of an authorization.
func decisionLabel(d authz.Decision, err error) string {
	switch {
	case d == authz.Allow:
		return "allowed"
	case err != nil:
		return "error"
	case d == authz.Deny:
		return "denied"
	}
	return "no-opinion"
}
