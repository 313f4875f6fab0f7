package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/endpoints/request"
)

// WithAuthorization lets a request through only if the authorizer allows
// it; otherwise it answers 403 with kube's message.
func WithAuthorization(a authz.Authorizer, logger *slog.Logger) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, _ := authn.UserFrom(r.Context())
			info, _ := request.InfoFrom(r.Context())
			d, reason, err := a.Authorize(r.Context(), authz.Attributes{User: user, Info: info})
			if d == authz.Allow {
				h.ServeHTTP(w, r)
				return
			}
			if err != nil {
				logger.Error("authorization failed", "err", err)
			}
			writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, forbiddenMessage(user, info, reason))
		})
	}
}

func forbiddenMessage(u *authn.User, info *request.Info, reason string) string {
	name := "<unknown>"
	if u != nil {
		name = u.Name
	}
	if info == nil {
		info = &request.Info{}
	}
	var msg string
	if !info.IsResourceRequest {
		msg = fmt.Sprintf("forbidden: User %q cannot %s path %q", name, info.Verb, info.Path)
	} else {
		resource := info.Resource
		if info.Subresource != "" {
			resource += "/" + info.Subresource
		}
		msg = fmt.Sprintf("%s is forbidden: User %q cannot %s resource %q in API group %q", resource, name, info.Verb, resource, info.APIGroup)
		if info.Namespace != "" {
			msg += fmt.Sprintf(" in the namespace %q", info.Namespace)
		}
	}
	if reason != "" {
		msg += ": " + strings.TrimSpace(reason)
	}
	return msg
}
