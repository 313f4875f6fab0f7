package aggregator

import (
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/endpoints/discovery"
)

// discoveryGroups is the part of the server remote groups are listed in.
type discoveryGroups interface {
	Discovery() *discovery.Registry
	SetDiscoveryGroup(g discovery.Group)
	RemoveDiscoveryGroup(name string)
}

// remoteDiscovery lists the groups of available remote APIServices in the
// chain's discovery (/apis and aggregated discovery), with the resources
// their servers listed at the last availability check.
type remoteDiscovery struct {
	server discoveryGroups

	mu     sync.Mutex // guards the fields below
	byName map[string]remoteVersion
	groups map[string]bool // the groups this has listed
}

type remoteVersion struct {
	group, version                 string
	groupPriority, versionPriority int32
	resources                      []metav1.APIResource
	stale                          bool // the last fetch failed
}

func newRemoteDiscovery(s discoveryGroups) *remoteDiscovery {
	return &remoteDiscovery{server: s, byName: map[string]remoteVersion{}, groups: map[string]bool{}}
}

// set lists svc's group version with the resources of doc, fetched now.
func (d *remoteDiscovery) set(svc *apiregv1.APIService, doc *metav1.APIResourceList) {
	var resources []metav1.APIResource
	if doc != nil {
		resources = doc.APIResources
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byName[svc.Name] = remoteVersion{group: svc.Spec.Group, version: svc.Spec.Version,
		groupPriority: svc.Spec.GroupPriorityMinimum, versionPriority: svc.Spec.VersionPriority, resources: resources}
	d.rebuildLocked(svc.Spec.Group)
}

// stale lists svc's group version as kube's aggregator does when its
// server cannot be reached: with the resources last fetched (none if never)
// and marked Stale in aggregated discovery, so that clients learn the
// version exists and that its resources may be out of date.
func (d *remoteDiscovery) stale(svc *apiregv1.APIService) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.byName[svc.Name]
	if v.group != svc.Spec.Group || v.version != svc.Spec.Version {
		v = remoteVersion{group: svc.Spec.Group, version: svc.Spec.Version}
	}
	if v.stale && v.groupPriority == svc.Spec.GroupPriorityMinimum && v.versionPriority == svc.Spec.VersionPriority {
		return
	}
	v.groupPriority, v.versionPriority, v.stale = svc.Spec.GroupPriorityMinimum, svc.Spec.VersionPriority, true
	d.byName[svc.Name] = v
	d.rebuildLocked(svc.Spec.Group)
}

// drop takes svc's group version out.
func (d *remoteDiscovery) drop(svc *apiregv1.APIService) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old, ok := d.byName[svc.Name]
	if !ok {
		return
	}
	delete(d.byName, svc.Name)
	d.rebuildLocked(old.group)
}

// rebuildLocked lists group with its remote versions, by version priority
// then kube's version order, or removes it when none is left. A group the
// chain serves itself is left alone.
func (d *remoteDiscovery) rebuildLocked(group string) {
	var versions []remoteVersion
	for _, v := range d.byName {
		if v.group == group {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		if d.groups[group] {
			d.server.RemoveDiscoveryGroup(group)
			delete(d.groups, group)
		}
		return
	}
	if _, local := d.server.Discovery().Group(group); local && !d.groups[group] {
		return
	}
	sort.Slice(versions, func(i, j int) bool {
		if versions[i].versionPriority != versions[j].versionPriority {
			return versions[i].versionPriority > versions[j].versionPriority
		}
		return version.CompareKubeAwareVersionStrings(versions[i].version, versions[j].version) > 0
	})
	g := discovery.Group{Name: group}
	for _, v := range versions {
		g.Priority = max(g.Priority, int(v.groupPriority))
		g.Versions = append(g.Versions, discovery.Version{Version: v.version, Resources: v.resources, Stale: v.stale})
	}
	d.server.SetDiscoveryGroup(g)
	d.groups[group] = true
}
