package controlplane

import (
	"slices"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/capstan-io/capstan/apis/authorization"
	"github.com/capstan-io/capstan/authz"
	authznode "github.com/capstan-io/capstan/authz/node"
	authzrbac "github.com/capstan-io/capstan/authz/rbac"
	"github.com/capstan-io/capstan/authz/rbac/bootstrap"
	"github.com/capstan-io/capstan/endpoints"
)

// priorityAuthorization orders authorization.k8s.io in /apis, as kube.
const priorityAuthorization = 17600

// Authorization is the authorization of the server chain: the authorizer
// of --authorization-mode, to be set in the generic config, and with RBAC
// the source its RBAC authorizer reads, which the kube server feeds (from
// its registry at first, then from informers).
type Authorization struct {
	Authorizer authz.Authorizer
	rbac       *authzrbac.Deferred   // nil without RBAC mode
	node       *authznode.Authorizer // nil without Node mode
}

// NewAuthorization builds the authorizer of modes (see authz.ForModes).
func NewAuthorization(modes []string) (*Authorization, error) {
	a := &Authorization{}
	var m authz.ModeAuthorizers
	if slices.Contains(modes, authz.ModeRBAC) {
		a.rbac = &authzrbac.Deferred{}
		m.RBAC = authzrbac.New(a.rbac)
	}
	if slices.Contains(modes, authz.ModeNode) {
		a.node = authznode.New(bootstrap.NodeRules())
		m.Node = a.node
	}
	authorizer, err := authz.ForModes(modes, m)
	if err != nil {
		return nil, err
	}
	a.Authorizer = authorizer
	return a, nil
}

// rbacSource is the source the RBAC authorizer reads, or nil.
func (a *Authorization) rbacSource() *authzrbac.Deferred {
	if a == nil {
		return nil
	}
	return a.rbac
}

// authorizationGroup is authorization.k8s.io/v1: reviews answered by a,
// not stored.
func authorizationGroup(a authz.Authorizer) builtGroup {
	resources := []endpoints.Resource{
		{Name: "subjectaccessreviews", Kind: "SubjectAccessReview", Storage: authorization.SubjectAccessReviewREST{Authorizer: a}, NoFieldManager: true},
		{Name: "selfsubjectaccessreviews", Kind: "SelfSubjectAccessReview", Storage: authorization.SelfSubjectAccessReviewREST{Authorizer: a}, NoFieldManager: true},
		{Name: "localsubjectaccessreviews", Kind: "LocalSubjectAccessReview", Storage: authorization.LocalSubjectAccessReviewREST{Authorizer: a}, NoFieldManager: true},
		{Name: "selfsubjectrulesreviews", Kind: "SelfSubjectRulesReview", Storage: authorization.SelfSubjectRulesReviewREST{Authorizer: a}, NoFieldManager: true},
	}
	return builtGroup{group: endpoints.APIGroup{
		Name: authorizationv1.GroupName, Priority: priorityAuthorization,
		Versions: []endpoints.GroupVersion{{Version: "v1", Resources: resources}},
	}}
}
