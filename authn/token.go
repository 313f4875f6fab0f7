package authn

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// TokenAuthenticator authenticates a bearer token. As with Authenticator,
// ok=false with a nil error means the token is not of a kind it knows.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (resp *Response, ok bool, err error)
}

// TokenAuthenticatorFunc adapts a function to TokenAuthenticator.
type TokenAuthenticatorFunc func(ctx context.Context, token string) (*Response, bool, error)

// AuthenticateToken calls f(ctx, token).
func (f TokenAuthenticatorFunc) AuthenticateToken(ctx context.Context, token string) (*Response, bool, error) {
	return f(ctx, token)
}

// UnionTokens tries auths in order; the first that accepts the token wins.
// Errors are returned, aggregated, only when none accepts it.
func UnionTokens(auths ...TokenAuthenticator) TokenAuthenticator {
	auths = slices.DeleteFunc(slices.Clone(auths), func(a TokenAuthenticator) bool { return a == nil })
	if len(auths) == 1 {
		return auths[0]
	}
	return TokenAuthenticatorFunc(func(ctx context.Context, token string) (*Response, bool, error) {
		var errs []error
		for _, a := range auths {
			resp, ok, err := a.AuthenticateToken(ctx, token)
			if err != nil {
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

// ErrInvalidBearerToken is the error of a bearer token no token
// authenticator knows.
var ErrInvalidBearerToken = errors.New("invalid bearer token")

// NewBearerToken returns an Authenticator of "Authorization: Bearer <token>"
// headers, which it hands to tokens. A request without such a header, or
// with an empty token, gets no opinion; a token that tokens does not accept
// is an error (ErrInvalidBearerToken when tokens gave none), so that the
// request gets 401 rather than falling through to anonymous.
//
// apiAudiences are the audiences of the server (--api-audiences): when the
// request's context names none (see WithAudiences), the token is checked
// against these.
func NewBearerToken(tokens TokenAuthenticator, apiAudiences []string) Authenticator {
	return AuthenticatorFunc(func(r *http.Request) (*Response, bool, error) {
		token, ok := BearerToken(r)
		if !ok {
			return nil, false, nil
		}
		return authenticateToken(r, tokens, apiAudiences, token)
	})
}

// authenticateToken hands a request's token to tokens, checked against
// apiAudiences when the request's context names no audiences.
func authenticateToken(r *http.Request, tokens TokenAuthenticator, apiAudiences []string, token string) (*Response, bool, error) {
	ctx := r.Context()
	if _, set := AudiencesFrom(ctx); !set && len(apiAudiences) > 0 {
		ctx = WithAudiences(ctx, apiAudiences)
	}
	resp, ok, err := tokens.AuthenticateToken(ctx, token)
	if ok {
		return resp, true, nil
	}
	if err == nil {
		err = ErrInvalidBearerToken
	}
	return nil, false, err
}

// BearerToken returns the token of a request's "Authorization: Bearer"
// header (the scheme is case-insensitive); ok is false without one.
func BearerToken(r *http.Request) (string, bool) {
	header := strings.TrimSpace(r.Header.Get("Authorization"))
	if header == "" {
		return "", false
	}
	parts := strings.SplitN(header, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

type audiencesKey struct{}

// WithAudiences returns a copy of ctx naming the audiences a credential
// must be valid for.
func WithAudiences(ctx context.Context, auds []string) context.Context {
	return context.WithValue(ctx, audiencesKey{}, auds)
}

// AudiencesFrom returns the audiences ctx names, if any.
func AudiencesFrom(ctx context.Context) ([]string, bool) {
	auds, ok := ctx.Value(audiencesKey{}).([]string)
	return auds, ok
}

// IntersectAudiences returns the audiences in both a and b, in a's order.
func IntersectAudiences(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// AudienceAgnostic wraps a token authenticator whose credentials are valid
// for any of the server's own audiences (implicit): when the context asks
// for audiences none of which is the server's, the token gets no opinion;
// otherwise the response carries the audiences in common.
func AudienceAgnostic(implicit []string, a TokenAuthenticator) TokenAuthenticator {
	return TokenAuthenticatorFunc(func(ctx context.Context, token string) (*Response, bool, error) {
		target, ok := AudiencesFrom(ctx)
		if !ok {
			return a.AuthenticateToken(ctx, token)
		}
		auds := IntersectAudiences(implicit, target)
		if len(auds) == 0 {
			return nil, false, nil
		}
		resp, ok, err := a.AuthenticateToken(ctx, token)
		if resp != nil {
			out := *resp
			out.Audiences = auds
			resp = &out
		}
		return resp, ok, err
	})
}
