package authz

import (
	"context"
	"errors"
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/capstan-io/capstan/authn"
)

// PrivilegedGroups allows every request of a member of one of groups and
// has no opinion on the others. kube puts it before the configured modes
// for system:masters, the group of the admin and of the loopback client.
func PrivilegedGroups(groups ...string) Authorizer {
	groups = slices.Clone(groups)
	return AuthorizerFunc(func(_ context.Context, a Attributes) (Decision, string, error) {
		if a.User == nil {
			return NoOpinion, "Error", errNoUser
		}
		for _, g := range a.User.Groups {
			if slices.Contains(groups, g) {
				return Allow, "", nil
			}
		}
		return NoOpinion, "", nil
	})
}

var errNoUser = errors.New("no user on request.")

// allowAll is --authorization-mode=AlwaysAllow: it allows everything and
// lists a rule for everything.
type allowAll struct{}

func (allowAll) Authorize(context.Context, Attributes) (Decision, string, error) {
	return Allow, "", nil
}

func (allowAll) RulesFor(context.Context, *authn.User, string) (Rules, error) {
	return Rules{
		Resource:    []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		NonResource: []authorizationv1.NonResourceRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}, nil
}

// denyAll is --authorization-mode=AlwaysDeny: no opinion on anything, so
// that a later mode may still allow, with kube's reason.
type denyAll struct{}

func (denyAll) Authorize(context.Context, Attributes) (Decision, string, error) {
	return NoOpinion, "Everything is forbidden.", nil
}

func (denyAll) RulesFor(context.Context, *authn.User, string) (Rules, error) {
	return Rules{}, nil
}
