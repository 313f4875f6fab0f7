// Package authn authenticates requests: it turns the credentials a request
// carries (a client certificate, a token, nothing at all) into a User.
//
// The authenticators are kube's: front-proxy request headers, x509 client
// certificates (a certificate's user remembered, weakly, until the chain's
// first expiry), static tokens, service account JWTs bound and
// secret-based, bootstrap tokens, a TokenReview webhook and anonymous,
// joined in unions, with a cache of token results. It also signs
// TokenRequests and serves the OIDC discovery documents.
package authn

import "context"

// Well-known user and group names, as Kubernetes defines them.
const (
	// Anonymous is the user of a request that carries no credentials.
	Anonymous = "system:anonymous"
	// AllAuthenticated is the group of every authenticated user.
	AllAuthenticated = "system:authenticated"
	// AllUnauthenticated is the group of the anonymous user.
	AllUnauthenticated = "system:unauthenticated"
	// SystemPrivilegedGroup is the group that RBAC lets do anything.
	SystemPrivilegedGroup = "system:masters"

	// CredentialIDKey is the Extra key naming the credential used, e.g.
	// "X509SHA256=<hex>" for a client certificate.
	CredentialIDKey = "authentication.kubernetes.io/credential-id"
)

// User is who a request acts as.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

type userKey struct{}

// WithUser returns a copy of ctx that carries u.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user ctx carries, if any.
func UserFrom(ctx context.Context) (*User, bool) {
	u, ok := ctx.Value(userKey{}).(*User)
	return u, ok && u != nil
}
