package authn

import "net/http"

// Authenticator finds out who sent a request. ok is false, with a nil error,
// when the request carries no credentials of the kind it understands ("no
// opinion"); an error means credentials were found but are not valid.
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (resp *Response, ok bool, err error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(r *http.Request) (*Response, bool, error)

// AuthenticateRequest calls f(r).
func (f AuthenticatorFunc) AuthenticateRequest(r *http.Request) (*Response, bool, error) {
	return f(r)
}

// Response is the outcome of a successful authentication.
type Response struct {
	User *User
	// Audiences the credential is valid for; empty means the API server's
	// own audiences (kube's "audience agnostic" credentials).
	Audiences []string
	// AuditAnnotations are added to the request's audit event (a stale
	// service account token's, say).
	AuditAnnotations map[string]string
}
