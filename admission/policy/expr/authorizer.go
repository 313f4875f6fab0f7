package expr

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// AuthorizerValues are the authorizer and authorizer.requestResource
// variables: kube's CEL authorizer library asking capstan's authorizer, as
// the user of the write. Without an authorizer (none configured) both are
// left out, and an expression that uses them errors.
func AuthorizerValues(az authz.Authorizer, u *authn.User, a *admission.Attributes) map[string]any {
	if az == nil {
		return map[string]any{}
	}
	info := &user.DefaultInfo{}
	if u != nil {
		info = &user.DefaultInfo{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	adapter := authorizerAdapter{az}
	return map[string]any{
		AuthorizerVar:      library.NewAuthorizerVal(info, adapter),
		RequestResourceVar: library.NewResourceAuthorizerVal(info, adapter, requestResource{a}),
	}
}

// requestResource is the write's resource as the library reads it.
type requestResource struct{ a *admission.Attributes }

func (r requestResource) GetName() string                          { return r.a.Name }
func (r requestResource) GetNamespace() string                     { return r.a.Namespace }
func (r requestResource) GetResource() schema.GroupVersionResource { return r.a.Resource }
func (r requestResource) GetSubresource() string                   { return r.a.Subresource }

// authorizerAdapter asks capstan's authorizer what the library asks
// kube's: the library's checks are written against kube's interfaces.
type authorizerAdapter struct{ az authz.Authorizer }

var _ authorizer.UnconditionalAuthorizer = authorizerAdapter{}

func (ad authorizerAdapter) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	info := &request.Info{
		IsResourceRequest: a.IsResourceRequest(), Path: a.GetPath(), Verb: a.GetVerb(),
		APIGroup: a.GetAPIGroup(), APIVersion: a.GetAPIVersion(), Namespace: a.GetNamespace(),
		Resource: a.GetResource(), Subresource: a.GetSubresource(), Name: a.GetName(),
	}
	if reqs, err := a.GetFieldSelector(); err == nil && len(reqs) > 0 {
		parts := make([]string, len(reqs))
		for i, r := range reqs {
			parts[i] = r.Field + string(r.Operator) + r.Value
		}
		info.FieldSelector = strings.Join(parts, ",")
	}
	if reqs, err := a.GetLabelSelector(); err == nil && len(reqs) > 0 {
		parts := make([]string, len(reqs))
		for i, r := range reqs {
			parts[i] = r.String()
		}
		info.LabelSelector = strings.Join(parts, ",")
	}
	var u *authn.User
	if ui := a.GetUser(); ui != nil {
		u = &authn.User{Name: ui.GetName(), UID: ui.GetUID(), Groups: ui.GetGroups(), Extra: ui.GetExtra()}
	}
	d, reason, err := ad.az.Authorize(ctx, authz.Attributes{User: u, Info: info})
	switch d {
	case authz.Allow:
		return authorizer.DecisionAllow, reason, err
	case authz.NoOpinion:
		return authorizer.DecisionNoOpinion, reason, err
	default:
		return authorizer.DecisionDeny, reason, err
	}
}
