package apiextensions

import (
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	crdapi "github.com/capstan-io/capstan/apis/apiextensions"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/endpoints/discovery"
)

// priorityCustomResources orders the groups of CRDs in /apis after the
// built-in ones, as kube's APIServices for CRD groups do.
const priorityCustomResources = 1000

// crVerbs are the verbs of a custom resource, in kube's order.
var crVerbs = metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}

// subresourceVerbs are the verbs of the status and scale subresources.
var subresourceVerbs = metav1.Verbs{"get", "patch", "update"}

// updateDiscovery publishes the group as its established CRDs make it, or
// removes it when none is left.
func (h *crdHandler) updateDiscovery(group string) {
	h.mu.RLock()
	var crds []*apiextv1.CustomResourceDefinition
	for _, e := range h.groups[group] {
		crds = append(crds, e.crd)
	}
	h.mu.RUnlock()
	if len(crds) == 0 {
		h.server.RemoveDiscoveryGroup(group)
		return
	}
	h.server.SetDiscoveryGroup(discoveryGroup(group, crds))
}

// discoveryGroup is the discovery entry of a group of CRDs: every version
// one of them serves, in kube's version priority order, with the resources
// serving it.
func discoveryGroup(group string, crds []*apiextv1.CustomResourceDefinition) discovery.Group {
	byVersion := map[string][]metav1.APIResource{}
	for _, crd := range crds {
		storageVersion, _ := crdapi.StorageVersion(crd)
		names := crd.Status.AcceptedNames
		hash := endpoints.StorageVersionHash(schema.GroupVersionKind{Group: group, Version: storageVersion, Kind: names.Kind})
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			rs := byVersion[v.Name]
			rs = append(rs, metav1.APIResource{
				Name: names.Plural, SingularName: names.Singular, Namespaced: crd.Spec.Scope == apiextv1.NamespaceScoped,
				Kind: names.Kind, Verbs: crVerbs, ShortNames: names.ShortNames, Categories: names.Categories,
				StorageVersionHash: hash,
			})
			if sub := v.Subresources; sub != nil && sub.Status != nil {
				rs = append(rs, metav1.APIResource{Name: names.Plural + "/status", Namespaced: crd.Spec.Scope == apiextv1.NamespaceScoped,
					Kind: names.Kind, Verbs: subresourceVerbs})
			}
			if sub := v.Subresources; sub != nil && sub.Scale != nil {
				rs = append(rs, metav1.APIResource{Name: names.Plural + "/scale", Namespaced: crd.Spec.Scope == apiextv1.NamespaceScoped,
					Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: subresourceVerbs})
			}
			byVersion[v.Name] = rs
		}
	}
	versions := make([]string, 0, len(byVersion))
	for v := range byVersion {
		versions = append(versions, v)
	}
	sort.Slice(versions, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(versions[i], versions[j]) > 0 })
	g := discovery.Group{Name: group, Priority: priorityCustomResources, KindVersions: true}
	for _, v := range versions {
		rs := byVersion[v]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
		g.Versions = append(g.Versions, discovery.Version{Version: v, Resources: rs})
	}
	return g
}
