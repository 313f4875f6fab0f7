package discovery

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/metrics"
)

// documents are the encoded discovery documents of one state of the registry.
type documents struct {
	legacyGroups   encoded            // /apis as APIGroupList
	aggregatedCore encoded            // /api as APIGroupDiscoveryList
	aggregatedAPIs encoded            // /apis as APIGroupDiscoveryList
	group          map[string]encoded // /apis/<group> as APIGroup
	version        map[string]encoded // "<group>/<version>" as APIResourceList
	coreVersions   []string           // versions of the core group for /api
}

// encoded is a JSON document with its ETag.
type encoded struct {
	body []byte
	etag string
}

func encode(v any) encoded {
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("discovery documents are plain data and always encode: %v", err))
	}
	return encoded{body: body, etag: fmt.Sprintf("%X", sha256.Sum256(body))}
}

func buildDocuments(groups []*Group) *documents {
	metrics.DiscoveryAggregated()
	d := &documents{group: map[string]encoded{}, version: map[string]encoded{}}
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	core := aggregatedList()
	apis := aggregatedList()
	for _, g := range groups {
		for _, v := range g.Versions {
			d.version[g.Name+"/"+v.Version] = encode(resourceList(g.Name, v))
		}
		if g.Name == "" {
			for _, v := range g.Versions {
				d.coreVersions = append(d.coreVersions, v.Version)
			}
			core.Items = append(core.Items, aggregatedGroup(g))
			continue
		}
		ag := apiGroup(g)
		list.Groups = append(list.Groups, ag)
		d.group[g.Name] = encode(&ag)
		apis.Items = append(apis.Items, aggregatedGroup(g))
	}
	d.legacyGroups = encode(list)
	d.aggregatedCore = encode(core)
	d.aggregatedAPIs = encode(apis)
	return d
}

func groupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

func apiGroup(g *Group) metav1.APIGroup {
	ag := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g.Name}
	for _, v := range g.Versions {
		ag.Versions = append(ag.Versions, metav1.GroupVersionForDiscovery{GroupVersion: groupVersion(g.Name, v.Version), Version: v.Version})
	}
	if len(ag.Versions) > 0 {
		ag.PreferredVersion = ag.Versions[0]
	}
	return ag
}

func resourceList(group string, v Version) *metav1.APIResourceList {
	rs := v.Resources
	if rs == nil {
		rs = []metav1.APIResource{}
	}
	return &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: groupVersion(group, v.Version), APIResources: rs,
	}
}

func aggregatedList() *apidiscoveryv2.APIGroupDiscoveryList {
	return &apidiscoveryv2.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2"},
		Items:    []apidiscoveryv2.APIGroupDiscovery{},
	}
}

func aggregatedGroup(g *Group) apidiscoveryv2.APIGroupDiscovery {
	out := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g.Name}}
	for _, v := range g.Versions {
		av := apidiscoveryv2.APIVersionDiscovery{Version: v.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
		if v.Stale {
			av.Freshness = apidiscoveryv2.DiscoveryFreshnessStale
		}
		parents := map[string]int{}
		kindGroup, kindVersion := "", ""
		if g.KindVersions {
			kindGroup, kindVersion = g.Name, v.Version
		}
		for _, r := range v.Resources {
			parent, sub, isSub := strings.Cut(r.Name, "/")
			if !isSub {
				parents[parent] = len(av.Resources)
				av.Resources = append(av.Resources, aggregatedResource(kindGroup, kindVersion, r))
				continue
			}
			if i, ok := parents[parent]; ok {
				av.Resources[i].Subresources = append(av.Resources[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
					Subresource: sub, ResponseKind: responseKind(kindGroup, kindVersion, r), Verbs: r.Verbs,
				})
			}
		}
		out.Versions = append(out.Versions, av)
	}
	return out
}

// aggregatedResource is r in aggregated discovery; group and version name
// the response kind's when r does not ("" for kube's built-in groups).
func aggregatedResource(group, version string, r metav1.APIResource) apidiscoveryv2.APIResourceDiscovery {
	scope := apidiscoveryv2.ScopeCluster
	if r.Namespaced {
		scope = apidiscoveryv2.ScopeNamespace
	}
	return apidiscoveryv2.APIResourceDiscovery{
		Resource: r.Name, ResponseKind: responseKind(group, version, r), Scope: scope,
		SingularResource: r.SingularName, Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
	}
}

func responseKind(group, version string, r metav1.APIResource) *metav1.GroupVersionKind {
	if r.Group != "" || r.Version != "" {
		return &metav1.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
	}
	return &metav1.GroupVersionKind{Group: group, Version: version, Kind: r.Kind}
}
