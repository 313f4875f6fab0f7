// Package discovery serves what clients learn before they make API calls:
// the groups, versions and resources of the server chain, in the legacy
// documents (/api, /apis, /apis/<group>[/<version>]) and the aggregated v2
// documents that kubectl and client-go ask for first.
package discovery

import (
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Group is one API group as discovery shows it.
type Group struct {
	Name string // "" for the core group
	// Priority orders /apis: higher first, as kube's APIService priorities.
	Priority int
	// Versions are the served versions, preferred first.
	Versions []Version
	// KindVersions names the group and version of every response kind in
	// aggregated discovery, as kube's CRD server does; kube's built-in
	// groups name them only for a kind of another group (Scale, Eviction).
	KindVersions bool
}

// Version is one version of a group and its resources. Subresources are
// listed as "resource/subresource", as in legacy discovery.
type Version struct {
	Version   string
	Resources []metav1.APIResource
	// Stale marks a remote version whose server could not be reached:
	// aggregated discovery says its resources may be out of date.
	Stale bool
}

// Registry holds the groups of every server in the chain. Servers add their
// groups when they are built and the CRD server adds and removes groups as
// CRDs come and go; the documents are rebuilt lazily after a change.
type Registry struct {
	mu     sync.RWMutex      // guards the fields below
	groups map[string]*Group // by name
	docs   *documents        // nil after a change
	// generation grows with every change, so that what others build from
	// the groups (the OpenAPI documents) can tell cheaply that it is stale.
	generation uint64
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{groups: map[string]*Group{}}
}

// Set adds or replaces a group.
func (r *Registry) Set(g Group) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.groups[g.Name] = &g
	r.docs = nil
	r.generation++
}

// Remove removes a group.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.groups, name)
	r.docs = nil
	r.generation++
}

// Generation counts the changes of the registry.
func (r *Registry) Generation() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.generation
}

// Groups returns the groups in discovery order and the generation they
// are of. The groups share their slices with the registry: read only.
func (r *Registry) Groups() ([]Group, uint64) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	sorted := r.sortedGroupsLocked()
	out := make([]Group, len(sorted))
	for i, g := range sorted {
		out[i] = *g
	}
	return out, r.generation
}

// Group returns a group by name.
func (r *Registry) Group(name string) (Group, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	g, ok := r.groups[name]
	if !ok {
		return Group{}, false
	}
	return *g, true
}

// sortedGroups returns the groups in discovery order: by priority, then name.
func (r *Registry) sortedGroupsLocked() []*Group {
	out := make([]*Group, 0, len(r.groups))
	for _, g := range r.groups {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority > out[j].Priority
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// documents returns the encoded documents, building them after a change.
func (r *Registry) documents() *documents {
	r.mu.RLock()
	d := r.docs
	r.mu.RUnlock()
	if d != nil {
		return d
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.docs == nil {
		r.docs = buildDocuments(r.sortedGroupsLocked())
	}
	return r.docs
}
