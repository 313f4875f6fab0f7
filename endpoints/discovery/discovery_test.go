package discovery

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

func TestWantsAggregated(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                 false,
		"application/json": false,
		"*/*":              false,
		aggregatedAccept:   true,
		// kubectl and client-go: aggregated first, the legacy document as fallback.
		aggregatedAccept + ",application/json": true,
		"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," + aggregatedAccept + ",application/json": true,
		// A version not served is passed over for the next entry.
		"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json":    false,
		"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," + aggregatedAccept: true,
		"application/json," + aggregatedAccept:                                                          false,
		"application/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList":                             true,
		"text/html;;;," + aggregatedAccept:                                                              true,
		"application/json;as=Table;g=meta.k8s.io;v=v1":                                                  false,
	} {
		if got := wantsAggregated(accept); got != want {
			t.Errorf("wantsAggregated(%q) = %t, want %t", accept, got, want)
		}
	}
}

func testRegistry() *Registry {
	r := NewRegistry()
	r.Set(Group{Name: "", Versions: []Version{{Version: "v1", Resources: []metav1.APIResource{
		{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: []string{"get", "list"}, ShortNames: []string{"po"}},
		{Name: "pods/status", Namespaced: true, Kind: "Pod", Verbs: []string{"get", "patch"}},
		{Name: "pods/eviction", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}},
		{Name: "nodes", SingularName: "node", Kind: "Node", Verbs: []string{"get"}},
	}}}})
	r.Set(Group{Name: "zeta.example.com", Versions: []Version{{Version: "v1"}}})
	r.Set(Group{Name: "apps", Priority: 10, Versions: []Version{
		{Version: "v1", Resources: []metav1.APIResource{{Name: "deployments", Namespaced: true, Kind: "Deployment", Verbs: []string{"get"}}}},
	}})
	r.Set(Group{Name: "remote.example.com", Priority: 5, KindVersions: true, Versions: []Version{
		{Version: "v2", Stale: true, Resources: []metav1.APIResource{{Name: "things", Kind: "Thing", Verbs: []string{"get"}}}},
		{Version: "v1"},
	}})
	return r
}

func get(t *testing.T, serve func(w http.ResponseWriter, req *http.Request), accept, etag string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/apis", nil)
	req.Header.Set("Accept", accept)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	rec := httptest.NewRecorder()
	serve(rec, req)
	return rec
}

// TestAggregated: /apis in priority then name order, subresources under
// their resource, response kinds of other groups kept, a stale version
// marked, the core group only under /api.
func TestAggregated(t *testing.T) {
	r := testRegistry()
	root := func(core bool) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, req *http.Request) { r.ServeRoot(w, req, core, "10.0.0.1:6443") }
	}
	var apis apidiscoveryv2.APIGroupDiscoveryList
	rec := get(t, root(false), aggregatedAccept, "")
	if ct := rec.Header().Get("Content-Type"); ct != aggregatedContentType || rec.Header().Get("Vary") != "Accept" {
		t.Fatalf("Content-Type %q, Vary %q", ct, rec.Header().Get("Vary"))
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &apis); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range apis.Items {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, []string{"apps", "remote.example.com", "zeta.example.com"}) {
		t.Errorf("/apis groups %q", names)
	}
	remote := apis.Items[1].Versions
	if len(remote) != 2 || remote[0].Freshness != apidiscoveryv2.DiscoveryFreshnessStale || remote[1].Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent {
		t.Errorf("remote versions %+v", remote)
	}
	if k := remote[0].Resources[0].ResponseKind; *k != (metav1.GroupVersionKind{Group: "remote.example.com", Version: "v2", Kind: "Thing"}) ||
		remote[0].Resources[0].Scope != apidiscoveryv2.ScopeCluster {
		t.Errorf("remote resource %+v", remote[0].Resources[0])
	}

	var core apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(get(t, root(true), aggregatedAccept, "").Body.Bytes(), &core); err != nil {
		t.Fatal(err)
	}
	if len(core.Items) != 1 || len(core.Items[0].Versions) != 1 {
		t.Fatalf("/api %+v", core)
	}
	res := core.Items[0].Versions[0].Resources
	if len(res) != 2 || res[0].Resource != "pods" || res[1].Resource != "nodes" || res[0].Scope != apidiscoveryv2.ScopeNamespace {
		t.Fatalf("core resources %+v", res)
	}
	subs := res[0].Subresources
	if len(subs) != 2 || subs[0].Subresource != "status" || *subs[0].ResponseKind != (metav1.GroupVersionKind{Kind: "Pod"}) ||
		*subs[1].ResponseKind != (metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}) {
		t.Errorf("pod subresources %+v", subs)
	}
}

// TestLegacy: /api with the server's address, /apis as APIGroupList,
// a group and a version; unknown ones are left to the caller.
func TestLegacy(t *testing.T) {
	r := testRegistry()
	var versions metav1.APIVersions
	rec := get(t, func(w http.ResponseWriter, req *http.Request) { r.ServeRoot(w, req, true, "10.0.0.1:6443") }, "application/json", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &versions); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(versions.Versions, []string{"v1"}) || versions.ServerAddressByClientCIDRs[0].ServerAddress != "10.0.0.1:6443" {
		t.Errorf("/api %+v", versions)
	}
	var groups metav1.APIGroupList
	rec = get(t, func(w http.ResponseWriter, req *http.Request) { r.ServeRoot(w, req, false, "") }, "", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &groups); err != nil {
		t.Fatal(err)
	}
	if len(groups.Groups) != 3 || groups.Groups[1].PreferredVersion.GroupVersion != "remote.example.com/v2" {
		t.Errorf("/apis %+v", groups)
	}
	var group metav1.APIGroup
	ok := false
	rec = get(t, func(w http.ResponseWriter, req *http.Request) { ok = r.ServeGroup(w, req, "apps") }, "", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &group); !ok || err != nil || group.Name != "apps" || group.Versions[0].GroupVersion != "apps/v1" {
		t.Errorf("/apis/apps %t %v %+v", ok, err, group)
	}
	var list metav1.APIResourceList
	rec = get(t, func(w http.ResponseWriter, req *http.Request) { ok = r.ServeVersion(w, req, "", "v1") }, "", "")
	if err := json.Unmarshal(rec.Body.Bytes(), &list); !ok || err != nil || list.GroupVersion != "v1" || len(list.APIResources) != 4 {
		t.Errorf("/api/v1 %t %v %+v", ok, err, list)
	}
	rec = get(t, func(w http.ResponseWriter, req *http.Request) { ok = r.ServeVersion(w, req, "zeta.example.com", "v1") }, "", "")
	if !ok || rec.Body.String() != `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"zeta.example.com/v1","resources":[]}` {
		t.Errorf("a version without resources: %s", rec.Body)
	}
	for _, unknown := range []func(http.ResponseWriter, *http.Request) bool{
		func(w http.ResponseWriter, req *http.Request) bool { return r.ServeGroup(w, req, "nope") },
		func(w http.ResponseWriter, req *http.Request) bool { return r.ServeGroup(w, req, "") },
		func(w http.ResponseWriter, req *http.Request) bool { return r.ServeVersion(w, req, "apps", "v2") },
	} {
		rec := get(t, func(w http.ResponseWriter, req *http.Request) { ok = unknown(w, req) }, "", "")
		if ok || rec.Body.Len() != 0 {
			t.Errorf("an unknown group or version was served: %s", rec.Body)
		}
	}
}

// TestETags: a client's ETag gets a 304 until the registry changes; a
// change moves the generation and the documents.
func TestETags(t *testing.T) {
	r := testRegistry()
	serve := func(w http.ResponseWriter, req *http.Request) { r.ServeRoot(w, req, false, "") }
	first := get(t, serve, aggregatedAccept, "")
	etag := first.Header().Get("ETag")
	if etag == "" || get(t, serve, "application/json", "").Header().Get("ETag") == etag {
		t.Fatalf("ETag %q, the same for both documents", etag)
	}
	if rec := get(t, serve, aggregatedAccept, etag); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match of the current ETag: %d %q", rec.Code, rec.Body)
	}
	gen := r.Generation()
	r.Remove("zeta.example.com")
	if r.Generation() == gen {
		t.Error("Remove kept the generation")
	}
	if _, ok := r.Group("zeta.example.com"); ok {
		t.Error("the removed group is still there")
	}
	rec := get(t, serve, aggregatedAccept, etag)
	if rec.Code != http.StatusOK || rec.Header().Get("ETag") == etag || rec.Body.String() == first.Body.String() {
		t.Errorf("after a change: %d, ETag %q", rec.Code, rec.Header().Get("ETag"))
	}
	groups, g := r.Groups()
	if g != r.Generation() || len(groups) != 3 || groups[0].Name != "apps" {
		t.Errorf("Groups() = %d groups at %d", len(groups), g)
	}
}
