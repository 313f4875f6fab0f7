package noderestriction

import (
	"context"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// allowed asks the authorizer whether the requesting user may verb the
// pseudo-resource resource named name in the request's group, version and
// namespace: how an admin lets kubelets ask for token audiences and pod
// certificate signers no pod refers to. user is the user's name, for the
// refusal.
//
// An authorizer may fail on one rule and allow by another, so an Allow
// stands whatever the error, as it does for the request itself.
func (p *Plugin) allowed(ctx context.Context, a *admission.Attributes, verb, resource, name string) (ok bool, user string, err error) {
	u, _ := authn.UserFrom(ctx)
	if u != nil {
		user = u.Name
	}
	if p.authz == nil {
		return false, user, nil
	}
	info := &request.Info{IsResourceRequest: true, Verb: verb, APIGroup: a.Resource.Group, APIVersion: a.Resource.Version,
		Namespace: a.Namespace, Resource: resource, Name: name}
	d, _, err := p.authz.Authorize(ctx, authz.Attributes{User: u, Info: info})
	return d == authz.Allow, user, err
}
