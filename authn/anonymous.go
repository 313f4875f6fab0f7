package authn

import "net/http"

// NewAnonymous returns an Authenticator that authenticates every request as
// system:anonymous in group system:unauthenticated. Place it last, after the
// authenticators of real credentials (see Union).
func NewAnonymous() Authenticator {
	return AuthenticatorFunc(func(*http.Request) (*Response, bool, error) {
		return &Response{User: &User{Name: Anonymous, Groups: []string{AllUnauthenticated}}}, true, nil
	})
}
