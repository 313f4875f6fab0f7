package controlplane

import (
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/capstan-io/capstan/apis/authentication"
	"github.com/capstan-io/capstan/endpoints"
)

// priorityAuthentication orders authentication.k8s.io in /apis, as kube.
const priorityAuthentication = 17700

// authenticationGroup is authentication.k8s.io/v1: reviews, not stored.
func authenticationGroup() builtGroup {
	return builtGroup{group: endpoints.APIGroup{
		Name: authenticationv1.GroupName, Priority: priorityAuthentication,
		Versions: []endpoints.GroupVersion{{Version: "v1", Resources: []endpoints.Resource{
			{Name: "selfsubjectreviews", Kind: "SelfSubjectReview", Storage: authentication.SelfSubjectReviewREST{}, NoFieldManager: true},
		}}},
	}}
}
