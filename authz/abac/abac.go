package abac

import (
	"context"
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// Authorizer allows a request when a policy of its list matches it, and
// otherwise has no opinion ("No policy matched.").
type Authorizer struct {
	policies []Spec
}

var (
	_ authz.Authorizer   = (*Authorizer)(nil)
	_ authz.RuleResolver = (*Authorizer)(nil)
)

// New returns the authorizer of policies.
func New(policies []Spec) *Authorizer { return &Authorizer{policies: slices.Clone(policies)} }

// NewFromFile returns the authorizer of the policy file at path.
func NewFromFile(path string) (*Authorizer, error) {
	p, err := Load(path)
	if err != nil {
		return nil, err
	}
	return New(p), nil
}

// Authorize allows what a policy matches.
func (a *Authorizer) Authorize(_ context.Context, attrs authz.Attributes) (authz.Decision, string, error) {
	for i := range a.policies {
		if matches(&a.policies[i], attrs.User, attrs.Info) {
			return authz.Allow, "", nil
		}
	}
	return authz.NoOpinion, "No policy matched.", nil
}

func matches(p *Spec, u *authn.User, info *request.Info) bool {
	if info == nil || !subjectMatches(p, u) || (p.Readonly && !readOnly(info.Verb)) {
		return false
	}
	if info.IsResourceRequest {
		return (p.Namespace == "*" || p.Namespace == info.Namespace) &&
			(p.Resource == "*" || p.Resource == info.Resource) &&
			(p.APIGroup == "*" || p.APIGroup == info.APIGroup)
	}
	return nonResourcePathMatches(p.NonResourcePath, info.Path)
}

// subjectMatches: a policy names a user, a group, or both (all must match);
// "*" matches anyone; naming neither matches no one.
func subjectMatches(p *Spec, u *authn.User) bool {
	if u == nil {
		return false
	}
	matched := false
	if p.User != "" {
		if p.User != "*" && p.User != u.Name {
			return false
		}
		matched = true
	}
	if p.Group != "" {
		if p.Group != "*" && !slices.Contains(u.Groups, p.Group) {
			return false
		}
		matched = true
	}
	return matched
}

func readOnly(verb string) bool { return verb == "get" || verb == "list" || verb == "watch" }

// RulesFor lists the policies of u that apply in namespace.
func (a *Authorizer) RulesFor(_ context.Context, u *authn.User, namespace string) (authz.Rules, error) {
	var out authz.Rules
	for _, p := range a.policies {
		if !subjectMatches(&p, u) || (p.Namespace != "*" && p.Namespace != namespace) {
			continue
		}
		verbs := []string{"*"}
		if p.Readonly {
			verbs = []string{"get", "list", "watch"}
		}
		if p.Resource != "" {
			out.Resource = append(out.Resource, authorizationv1.ResourceRule{Verbs: verbs, APIGroups: []string{p.APIGroup}, Resources: []string{p.Resource}})
		}
		if p.NonResourcePath != "" {
			out.NonResource = append(out.NonResource, authorizationv1.NonResourceRule{Verbs: verbs, NonResourceURLs: []string{p.NonResourcePath}})
		}
	}
	return out, nil
}
