package webhook

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"

	"github.com/capstan-io/capstan/authz"
)

// SpecOf is the SubjectAccessReview spec a request is asked about.
func SpecOf(a authz.Attributes) authorizationv1.SubjectAccessReviewSpec {
	var spec authorizationv1.SubjectAccessReviewSpec
	if u := a.User; u != nil {
		spec.User, spec.UID, spec.Groups = u.Name, u.UID, u.Groups
		if u.Extra != nil {
			spec.Extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				spec.Extra[k] = v
			}
		}
	}
	info := a.Info
	if info == nil {
		return spec
	}
	if !info.IsResourceRequest {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: info.Path, Verb: info.Verb}
		return spec
	}
	spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
		Namespace: info.Namespace, Verb: info.Verb, Group: info.APIGroup, Version: info.APIVersion,
		Resource: info.Resource, Subresource: info.Subresource, Name: info.Name,
	}
	if info.FieldSelector != "" {
		spec.ResourceAttributes.FieldSelector = &authorizationv1.FieldSelectorAttributes{RawSelector: info.FieldSelector}
	}
	if info.LabelSelector != "" {
		spec.ResourceAttributes.LabelSelector = &authorizationv1.LabelSelectorAttributes{RawSelector: info.LabelSelector}
	}
	return spec
}

func toV1beta1(s authorizationv1.SubjectAccessReviewSpec) authorizationv1beta1.SubjectAccessReviewSpec {
	out := authorizationv1beta1.SubjectAccessReviewSpec{User: s.User, Groups: s.Groups, UID: s.UID}
	if s.Extra != nil {
		out.Extra = make(map[string]authorizationv1beta1.ExtraValue, len(s.Extra))
		for k, v := range s.Extra {
			out.Extra[k] = authorizationv1beta1.ExtraValue(v)
		}
	}
	if r := s.ResourceAttributes; r != nil {
		out.ResourceAttributes = &authorizationv1beta1.ResourceAttributes{
			Namespace: r.Namespace, Verb: r.Verb, Group: r.Group, Version: r.Version,
			Resource: r.Resource, Subresource: r.Subresource, Name: r.Name,
		}
		if r.FieldSelector != nil {
			out.ResourceAttributes.FieldSelector = &authorizationv1.FieldSelectorAttributes{RawSelector: r.FieldSelector.RawSelector}
		}
		if r.LabelSelector != nil {
			out.ResourceAttributes.LabelSelector = &authorizationv1.LabelSelectorAttributes{RawSelector: r.LabelSelector.RawSelector}
		}
	}
	if n := s.NonResourceAttributes; n != nil {
		out.NonResourceAttributes = &authorizationv1beta1.NonResourceAttributes{Path: n.Path, Verb: n.Verb}
	}
	return out
}
