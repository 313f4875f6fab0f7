package rbac

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
)

// Authorizer is --authorization-mode=RBAC. It allows a request when a rule
// of the user's roles matches it and otherwise has no opinion, so that a
// later authorizer may still allow; it never denies outright.
type Authorizer struct {
	resolver *Resolver
}

var (
	_ authz.Authorizer   = (*Authorizer)(nil)
	_ authz.RuleResolver = (*Authorizer)(nil)
)

// New returns the RBAC authorizer over s.
func New(s Source) *Authorizer { return &Authorizer{resolver: NewResolver(s)} }

// Authorize allows a request one of the user's rules matches; the reason
// says which binding did. Without a match, the reason carries the errors met
// resolving the user's roles (a binding to a missing role), as kube's
// "RBAC: ..." text, or is empty.
func (a *Authorizer) Authorize(ctx context.Context, attrs authz.Attributes) (authz.Decision, string, error) {
	if attrs.User == nil || attrs.Info == nil {
		return authz.NoOpinion, "", nil
	}
	var (
		reason string
		errs   []error
	)
	a.resolver.VisitRulesFor(ctx, attrs.User, attrs.Info.Namespace, func(src fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil && RuleAllows(attrs.Info, rule) {
			reason = "RBAC: allowed by " + src.String()
			return false
		}
		if err != nil {
			errs = append(errs, err)
		}
		return true
	})
	if reason != "" {
		return authz.Allow, reason, nil
	}
	if len(errs) > 0 {
		return authz.NoOpinion, fmt.Sprintf("RBAC: %v", utilerrors.NewAggregate(errs)), nil
	}
	return authz.NoOpinion, "", nil
}

// RulesFor lists the rules of u in namespace for a SelfSubjectRulesReview:
// a rule with resources becomes a resource rule, one with non-resource URLs
// a non-resource rule.
func (a *Authorizer) RulesFor(ctx context.Context, u *authn.User, namespace string) (authz.Rules, error) {
	rules, err := a.resolver.RulesFor(ctx, u, namespace)
	var out authz.Rules
	for _, r := range rules {
		if len(r.Resources) > 0 {
			out.Resource = append(out.Resource, authorizationv1.ResourceRule{
				Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames,
			})
		}
		if len(r.NonResourceURLs) > 0 {
			out.NonResource = append(out.NonResource, authorizationv1.NonResourceRule{
				Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs,
			})
		}
	}
	return out, err
}
