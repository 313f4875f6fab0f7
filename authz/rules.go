package authz

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/capstan-io/capstan/authn"
)

// Rules are what a user may do in one namespace, as a
// SelfSubjectRulesReview reports them (kubectl auth can-i --list).
type Rules struct {
	Resource    []authorizationv1.ResourceRule
	NonResource []authorizationv1.NonResourceRule
	// Incomplete is true when an authorizer cannot list everything it
	// would allow (a webhook, say).
	Incomplete bool
}

// RuleResolver is implemented by authorizers that can list the rules of a
// user. A partial answer comes with the error that cut it short.
type RuleResolver interface {
	RulesFor(ctx context.Context, u *authn.User, namespace string) (Rules, error)
}
