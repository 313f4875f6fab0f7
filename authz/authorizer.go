// Package authz decides whether a user may do what a request asks.
package authz

import (
	"context"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// Decision is an authorizer's answer.
type Decision int

// The answers an authorizer may give. The zero value denies.
const (
	Deny Decision = iota
	Allow
	NoOpinion
)

// Attributes are what an authorizer decides on.
type Attributes struct {
	User *authn.User
	Info *request.Info
}

// Authorizer decides one request. reason explains a denial to the client.
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Decision, string, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	return f(ctx, a)
}

// AlwaysAllow allows everything: --authorization-mode=AlwaysAllow.
var AlwaysAllow Authorizer = AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
})
