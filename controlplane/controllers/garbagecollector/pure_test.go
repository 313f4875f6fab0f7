package garbagecollector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestDiscovered(t *testing.T) {
	all := metav1.Verbs{"create", "delete", "get", "list", "watch"}
	groups := []*metav1.APIGroup{
		{Name: "", PreferredVersion: metav1.GroupVersionForDiscovery{Version: "v1"}},
		{Name: "example.com", PreferredVersion: metav1.GroupVersionForDiscovery{Version: "v2"}},
	}
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: all},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: all},
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: all},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: metav1.Verbs{"create"}},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget", Verbs: all}}},
		{GroupVersion: "example.com/v2", APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget", Verbs: all}}},
	}
	kinds, watch := discovered(groups, lists)
	want := map[schema.GroupVersionResource]bool{
		{Version: "v1", Resource: "configmaps"}:                    true,
		{Group: "example.com", Version: "v2", Resource: "widgets"}: true,
	}
	if len(watch) != len(want) {
		t.Fatalf("watch = %v, want %v", watch, want)
	}
	for gvr := range want {
		if !watch[gvr] {
			t.Errorf("%v not watched", gvr)
		}
	}
	// Owner references may name any served version.
	m, ok := kinds[schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}]
	if !ok || m.namespaced || m.gvr.Version != "v1" {
		t.Errorf("example.com/v1 Widget = %+v, %v", m, ok)
	}
	if m := kinds[schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}]; !m.namespaced {
		t.Errorf("ConfigMap not namespaced")
	}
}

func TestValidDependents(t *testing.T) {
	g := newGraph()
	yes := true
	ref := func(uid types.UID, block bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{UID: uid, Name: "o", BlockOwnerDeletion: &block}}
	}
	mk := func(uid types.UID, ns, name string, owners []metav1.OwnerReference) *node {
		return newNode(nil, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: uid, Namespace: ns, Name: name, OwnerReferences: owners}})
	}
	owner := mk("o", "a", "o", nil)
	clusterOwner := mk("c", "", "o", nil)
	nodes := []*node{
		owner, clusterOwner,
		mk("same", "a", "", ref("o", true)),
		mk("loose", "a", "", ref("o", false)),
		mk("other-ns", "b", "", ref("o", true)),
		mk("cluster-dep", "", "", ref("o", true)),
		mk("of-cluster", "b", "", ref("c", yes)),
	}
	for _, n := range nodes {
		g.put(n.uid(), n)
		g.link(n.uid(), n.owners())
	}
	all, blocking := g.validDependents(owner)
	if len(all) != 2 || len(blocking) != 1 || blocking[0].uid() != "same" {
		t.Errorf("dependents of a namespaced owner: all %d blocking %v", len(all), blocking)
	}
	if all, _ := g.validDependents(clusterOwner); len(all) != 1 || all[0].uid() != "of-cluster" {
		t.Errorf("dependents of a cluster-scoped owner: %v", all)
	}
	if g.solidOwners(g.get("other-ns"), g.get("other-ns").owners()) {
		t.Errorf("an owner in another namespace counts as solid")
	}
	if !g.solidOwners(g.get("same"), g.get("same").owners()) {
		t.Errorf("an owner in the namespace does not count as solid")
	}
}

func TestNodeResourceVersion(t *testing.T) {
	for _, rv := range []string{"", "0", "12345", "007", "abc", "18446744073709551616"} {
		n := newNode(nil, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}})
		if got := n.GetObjectMeta().GetResourceVersion(); got != rv && !(rv == "" && got == "0") {
			t.Errorf("resourceVersion %q read back as %q", rv, got)
		}
	}
}

func TestNodeUID(t *testing.T) {
	for _, uid := range []types.UID{"", "o", "0f8c3a2e-0000-4000-8000-000000000002", "0F8C3A2E-0000-4000-8000-000000000002",
		"{0f8c3a2e-0000-4000-8000-00000000000}", "0f8c3a2e00004000800000000000000200002"} {
		n := newNode(nil, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: uid}})
		if got := n.GetObjectMeta().GetUID(); got != uid {
			t.Errorf("UID %q read back as %q", uid, got)
		}
		g := newGraph()
		g.put(n.uid(), n)
		if g.get(uid) != n || g.len() != 1 {
			t.Errorf("UID %q: node not found by it", uid)
		}
		g.remove(uid)
		if g.len() != 0 {
			t.Errorf("UID %q: node not removed", uid)
		}
	}
}
