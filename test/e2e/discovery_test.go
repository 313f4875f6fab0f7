package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"net/http"
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLegacyDiscovery(t *testing.T) {
	e := e2eutil.Start(t)
	get := func(path string, into any) {
		t.Helper()
		r := e.Do(t, http.MethodGet, path, nil)
		if r.Code != 200 || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(r.Body, into) != nil {
			t.Fatalf("GET %s = %d %s %.300s", path, r.Code, r.Header.Get("Content-Type"), r.Body)
		}
	}
	var versions metav1.APIVersions
	get("/api", &versions)
	if versions.Kind != "APIVersions" || !slices.Equal(versions.Versions, []string{"v1"}) || len(versions.ServerAddressByClientCIDRs) != 1 {
		t.Errorf("/api = %+v", versions)
	}
	for _, path := range []string{"/apis", "/apis/"} { // kube serves both
		var groups metav1.APIGroupList
		get(path, &groups)
		i := slices.IndexFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == "coordination.k8s.io" })
		if groups.Kind != "APIGroupList" || i < 0 || groups.Groups[i].PreferredVersion.GroupVersion != "coordination.k8s.io/v1" {
			t.Fatalf("%s = %+v", path, groups)
		}
	}
	var group metav1.APIGroup
	get("/apis/coordination.k8s.io", &group)
	if group.Kind != "APIGroup" || group.Name != "coordination.k8s.io" || group.PreferredVersion.Version != "v1" {
		t.Errorf("/apis/coordination.k8s.io = %+v", group)
	}
	var leases metav1.APIResourceList
	get("/apis/coordination.k8s.io/v1", &leases)
	want := metav1.APIResource{Name: "leases", SingularName: "lease", Namespaced: true, Kind: "Lease",
		Verbs: metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}}
	if leases.GroupVersion != "coordination.k8s.io/v1" || len(leases.APIResources) == 0 || !sameResource(leases.APIResources[0], want) ||
		leases.APIResources[0].StorageVersionHash == "" {
		t.Errorf("/apis/coordination.k8s.io/v1 = %+v", leases)
	}
	var core metav1.APIResourceList
	get("/api/v1", &core)
	verbs := map[string]metav1.Verbs{}
	for _, r := range core.APIResources {
		verbs[r.Name] = r.Verbs
	}
	if !slices.Equal(verbs["namespaces/finalize"], metav1.Verbs{"update"}) || !slices.Equal(verbs["namespaces/status"], metav1.Verbs{"get", "patch", "update"}) {
		t.Errorf("namespace subresource verbs = finalize %v, status %v", verbs["namespaces/finalize"], verbs["namespaces/status"])
	}
	// A group no server has: kube's plain 404 (its last handler's).
	if r := e.Do(t, http.MethodGet, "/apis/example.com", nil); r.Code != 404 || string(r.Body) != "404 page not found\n" {
		t.Errorf("GET /apis/example.com = %d %q, want kube's plain 404", r.Code, r.Body)
	}
}

func sameResource(got, want metav1.APIResource) bool {
	return got.Name == want.Name && got.SingularName == want.SingularName && got.Namespaced == want.Namespaced &&
		got.Kind == want.Kind && slices.Equal(got.Verbs, want.Verbs)
}

func TestAggregatedDiscovery(t *testing.T) {
	e := e2eutil.Start(t)
	for _, path := range []string{"/api", "/apis"} {
		r := e.Do(t, http.MethodGet, path, nil, "Accept", e2eutil.AggregatedAccept+",application/json")
		var list apidiscoveryv2.APIGroupDiscoveryList
		if r.Code != 200 || r.Header.Get("Content-Type") != e2eutil.AggregatedAccept || json.Unmarshal(r.Body, &list) != nil ||
			list.Kind != "APIGroupDiscoveryList" || len(list.Items) == 0 {
			t.Fatalf("aggregated %s = %d %s %.300s", path, r.Code, r.Header.Get("Content-Type"), r.Body)
		}
		etag := r.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("aggregated %s has no ETag", path)
		}
		if again := e.Do(t, http.MethodGet, path, nil, "Accept", e2eutil.AggregatedAccept, "If-None-Match", etag); again.Code != 304 || len(again.Body) != 0 {
			t.Errorf("aggregated %s with If-None-Match = %d %q", path, again.Code, again.Body)
		}
		if other := e.Do(t, http.MethodGet, path, nil, "Accept", e2eutil.AggregatedAccept, "If-None-Match", `"other"`); other.Code != 200 {
			t.Errorf("aggregated %s with a stale ETag = %d", path, other.Code)
		}
		if path == "/api" {
			v := list.Items[0].Versions[0]
			if v.Version != "v1" || !slices.ContainsFunc(v.Resources, func(r apidiscoveryv2.APIResourceDiscovery) bool {
				return r.Resource == "configmaps" && r.Scope == apidiscoveryv2.ScopeNamespace && r.ResponseKind.Kind == "ConfigMap"
			}) {
				t.Errorf("aggregated /api v1 = %+v", v)
			}
		}
	}

	groups, resources, err := e.Clientset.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(groups, func(g *metav1.APIGroup) bool { return g.Name == "events.k8s.io" }) {
		t.Errorf("client-go discovery groups lack events.k8s.io")
	}
	found := map[string]bool{}
	for _, list := range resources {
		for _, r := range list.APIResources {
			found[list.GroupVersion+"/"+r.Name] = true
		}
	}
	for _, want := range []string{"v1/configmaps", "v1/namespaces/status", "coordination.k8s.io/v1/leases", "events.k8s.io/v1/events"} {
		if !found[want] {
			t.Errorf("client-go discovery lacks %s", want)
		}
	}
}
