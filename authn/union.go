package authn

import (
	"errors"
	"net/http"
	"slices"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Union tries auths in order; the first that authenticates the request wins.
// Errors are returned, aggregated, only when none succeeds, so that an
// invalid credential of one kind does not hide a valid one of another. The
// user of a success is added to system:authenticated (see
// WithAuthenticatedGroup). A union of one is that one, plus the group.
//
// kube-apiserver composes its authenticators so, and then tries anonymous
// only when they express no opinion; with this package:
//
//	UnionFailOnError(Union(x509, tokens...), NewAnonymous())
func Union(auths ...Authenticator) Authenticator {
	return WithAuthenticatedGroup(union(auths, false))
}

// UnionFailOnError tries auths in order until one succeeds or one returns an
// error, which is returned as it is. It adds no group.
func UnionFailOnError(auths ...Authenticator) Authenticator {
	return union(auths, true)
}

func union(auths []Authenticator, failOnError bool) Authenticator {
	if len(auths) == 1 {
		return auths[0]
	}
	auths = slices.Clone(auths)
	return AuthenticatorFunc(func(r *http.Request) (*Response, bool, error) {
		var errs []error
		for _, a := range auths {
			resp, ok, err := a.AuthenticateRequest(r)
			if err != nil {
				if failOnError {
					return resp, ok, err
				}
				errs = append(errs, err)
				continue
			}
			if ok {
				return resp, true, nil
			}
		}
		return nil, false, utilerrors.NewAggregate(errs)
	})
}

// WithAuthenticatedGroup adds system:authenticated to the groups of every
// user a authenticates, except the anonymous user and users that already
// are in system:authenticated or system:unauthenticated.
func WithAuthenticatedGroup(a Authenticator) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (*Response, bool, error) {
		resp, ok, err := a.AuthenticateRequest(r)
		if err != nil || !ok {
			return nil, ok, err
		}
		if resp == nil || resp.User == nil {
			return nil, false, errors.New("authenticator succeeded without a user")
		}
		u := resp.User
		if u.Name == Anonymous || slices.Contains(u.Groups, AllAuthenticated) || slices.Contains(u.Groups, AllUnauthenticated) {
			return resp, true, nil
		}
		groups := make([]string, 0, len(u.Groups)+1)
		groups = append(append(groups, u.Groups...), AllAuthenticated)
		out := *resp
		out.User = &User{Name: u.Name, UID: u.UID, Groups: groups, Extra: u.Extra}
		return &out, true, nil
	})
}
