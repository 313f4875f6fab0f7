package filters

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// serviceAccountPrefix starts the user names of service accounts.
const serviceAccountPrefix = "system:serviceaccount:"

// WithImpersonation lets a user act as another: the Impersonate-User,
// -Group, -Uid and -Extra-<key> headers name who, and each part must be
// allowed by the authorizer with the impersonate verb, as in kube.
func WithImpersonation(a authz.Authorizer, logger *slog.Logger) Filter {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			req, ok, err := impersonationRequested(r)
			if err != nil {
				writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
				return
			}
			if !ok {
				h.ServeHTTP(w, r)
				return
			}
			actor, _ := authn.UserFrom(r.Context())
			if denied := authorizeImpersonation(r.Context(), a, actor, req); denied != "" {
				logger.Debug("impersonation denied", "user", actor.Name, "reason", denied)
				writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, denied)
				return
			}
			for k := range r.Header {
				if strings.HasPrefix(k, authenticationv1.ImpersonateUserExtraHeaderPrefix) || strings.HasPrefix(k, "Impersonate-") {
					r.Header.Del(k)
				}
			}
			user := req.user()
			audit.LogImpersonatedUser(r.Context(), user)
			h.ServeHTTP(w, r.WithContext(authn.WithUser(r.Context(), user)))
		})
	}
}

// impersonation is what the headers ask for.
type impersonation struct {
	name   string
	uid    string
	groups []string
	extra  map[string][]string
}

// impersonationRequested reads the Impersonate-* headers; the result is
// made only for a request that has them (most have not).
func impersonationRequested(r *http.Request) (*impersonation, bool, error) {
	imp := impersonation{
		name:   r.Header.Get(authenticationv1.ImpersonateUserHeader),
		uid:    r.Header.Get(authenticationv1.ImpersonateUIDHeader),
		groups: r.Header.Values(authenticationv1.ImpersonateGroupHeader),
	}
	for k, vs := range r.Header {
		if key, ok := strings.CutPrefix(k, authenticationv1.ImpersonateUserExtraHeaderPrefix); ok {
			if imp.extra == nil {
				imp.extra = map[string][]string{}
			}
			imp.extra[unescapeExtraKey(strings.ToLower(key))] = vs
		}
	}
	if imp.name == "" {
		if len(imp.groups) > 0 || imp.uid != "" || len(imp.extra) > 0 {
			return nil, false, fmt.Errorf("requested %v without impersonating a user", requestedParts(imp))
		}
		return nil, false, nil
	}
	found := imp // a copy escapes, so that imp stays on the stack
	return &found, true, nil
}

func requestedParts(imp impersonation) []string {
	var parts []string
	for _, g := range imp.groups {
		parts = append(parts, "group "+g)
	}
	if imp.uid != "" {
		parts = append(parts, "uid "+imp.uid)
	}
	for k := range imp.extra {
		parts = append(parts, "extra "+k)
	}
	return parts
}

// unescapeExtraKey undoes the percent-encoding clients apply to extra keys.
func unescapeExtraKey(k string) string {
	if out, err := url.PathUnescape(k); err == nil {
		return out
	}
	return k
}

// user is the identity the request proceeds as.
func (imp *impersonation) user() *authn.User {
	u := &authn.User{Name: imp.name, UID: imp.uid, Groups: append([]string(nil), imp.groups...), Extra: imp.extra}
	if ns, _, ok := serviceAccountOf(imp.name); ok && len(imp.groups) == 0 {
		u.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
	}
	groups := sets.New(u.Groups...)
	switch {
	case imp.name == authn.Anonymous:
		if !groups.Has(authn.AllUnauthenticated) {
			u.Groups = append(u.Groups, authn.AllUnauthenticated)
		}
	case !groups.Has(authn.AllAuthenticated):
		u.Groups = append(u.Groups, authn.AllAuthenticated)
	}
	return u
}

func serviceAccountOf(name string) (ns, sa string, ok bool) {
	rest, ok := strings.CutPrefix(name, serviceAccountPrefix)
	if !ok {
		return "", "", false
	}
	ns, sa, ok = strings.Cut(rest, ":")
	return ns, sa, ok && ns != "" && sa != ""
}

// authorizeImpersonation checks each part of the request with the
// impersonate verb and returns kube's denial message, or "" if allowed.
func authorizeImpersonation(ctx context.Context, a authz.Authorizer, actor *authn.User, imp *impersonation) string {
	checks := []*request.Info{userCheck(imp.name)}
	for _, g := range imp.groups {
		checks = append(checks, &request.Info{IsResourceRequest: true, Verb: "impersonate", Resource: "groups", Name: g})
	}
	if imp.uid != "" {
		checks = append(checks, &request.Info{IsResourceRequest: true, Verb: "impersonate", APIGroup: authenticationv1.GroupName, Resource: "uids", Name: imp.uid})
	}
	for k, vs := range imp.extra {
		for _, v := range vs {
			checks = append(checks, &request.Info{IsResourceRequest: true, Verb: "impersonate", APIGroup: authenticationv1.GroupName,
				Resource: "userextras", Subresource: k, Name: v})
		}
	}
	for _, info := range checks {
		d, reason, _ := a.Authorize(ctx, authz.Attributes{User: actor, Info: info})
		if d != authz.Allow {
			return impersonationDenied(actor, info, reason)
		}
	}
	return ""
}

func userCheck(name string) *request.Info {
	if ns, sa, ok := serviceAccountOf(name); ok {
		return &request.Info{IsResourceRequest: true, Verb: "impersonate", APIVersion: "v1", Resource: "serviceaccounts", Namespace: ns, Name: sa}
	}
	return &request.Info{IsResourceRequest: true, Verb: "impersonate", APIVersion: "v1", Resource: "users", Name: name}
}

func impersonationDenied(actor *authn.User, info *request.Info, reason string) string {
	resource := info.Resource
	if info.Subresource != "" {
		resource += "/" + info.Subresource
	}
	msg := fmt.Sprintf("%s %q is forbidden: User %q cannot impersonate resource %q in API group %q", resource, info.Name, actor.Name, resource, info.APIGroup)
	if info.Namespace != "" {
		msg += fmt.Sprintf(" in the namespace %q", info.Namespace)
	}
	if reason != "" {
		msg += ": " + reason
	}
	return msg
}
