package filters

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// WithImpersonation lets a user act as another: the Impersonate-User,
// -Group, -Uid and -Extra-<key> headers name who. As in kube v1.37
// (ConstrainedImpersonation, on by default), the impersonation is allowed
// by one of kube's modes, tried in kube's order: a service account acting
// as its own node, any node, a service account, any other user, each
// allowed by impersonate:<mode> on what is impersonated and
// impersonate-on:<mode>:<verb> on the request; or the legacy impersonate
// verb on every part.
func WithImpersonation(a authz.Authorizer, logger *slog.Logger) Filter {
	modes := newImpersonationModes(a)
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			wanted, ok, err := impersonationRequested(r)
			if err != nil {
				writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
				return
			}
			if !ok {
				h.ServeHTTP(w, r)
				return
			}
			actor, _ := authn.UserFrom(r.Context())
			info, _ := request.InfoFrom(r.Context())
			if actor == nil || info == nil {
				writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "no user or request info for the impersonation")
				return
			}
			user, constraint, err := modes.impersonate(r.Context(), wanted, authz.Attributes{User: actor, Info: info})
			if err != nil {
				logger.Debug("impersonation denied", "user", actor.Name, "err", err)
				writeImpersonationError(w, err)
				return
			}
			for k := range r.Header {
				if strings.HasPrefix(k, "Impersonate-") {
					r.Header.Del(k)
				}
			}
			audit.LogImpersonatedUser(r.Context(), user, constraint)
			h.ServeHTTP(w, r.WithContext(authn.WithUser(r.Context(), user)))
		})
	}
}

func writeImpersonationError(w http.ResponseWriter, err error) {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		writeStatusObject(w, &se.ErrStatus)
		return
	}
	writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
}

// impersonation is what the headers ask for, as given.
type impersonation struct {
	name   string
	uid    string
	groups []string
	extra  map[string][]string
}

// onlyName: nothing but a user name is asked for, the one shape the node
// and service account modes take.
func (imp *impersonation) onlyName() bool {
	return imp.uid == "" && len(imp.groups) == 0 && len(imp.extra) == 0
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
		if key, ok := strings.CutPrefix(k, authenticationv1.ImpersonateUserExtraHeaderPrefix); ok && len(vs) > 0 {
			if imp.extra == nil {
				imp.extra = map[string][]string{}
			}
			key = unescapeExtraKey(strings.ToLower(key))
			imp.extra[key] = append(imp.extra[key], vs...)
		}
	}
	if imp.name == "" {
		if len(imp.groups) > 0 || imp.uid != "" || len(imp.extra) > 0 {
			// kube's message prints the wanted user as Go does.
			return nil, false, fmt.Errorf("requested &user.DefaultInfo{Name:\"\", UID:%q, Groups:%#v, Extra:%#v} without impersonating a user name",
				imp.uid, imp.groups, imp.extra)
		}
		return nil, false, nil
	}
	found := imp // a copy escapes, so that imp stays on the stack
	return &found, true, nil
}

// unescapeExtraKey undoes the percent-encoding clients apply to extra keys.
func unescapeExtraKey(k string) string {
	if out, err := url.PathUnescape(k); err == nil {
		return out
	}
	return k
}
