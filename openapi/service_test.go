package openapi

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func v2Doc(t *testing.T, s *Service) *spec.Swagger {
	t.Helper()
	doc, err := s.v2()
	if err != nil {
		t.Fatal(err)
	}
	var sw spec.Swagger
	if err := json.Unmarshal(doc.json, &sw); err != nil {
		t.Fatalf("decoding /openapi/v2: %v", err)
	}
	return &sw
}

func v3Doc(t *testing.T, s *Service, key string) *spec3.OpenAPI {
	t.Helper()
	doc, found, err := s.v3(key)
	if !found || err != nil {
		t.Fatalf("V3(%q) = found %v, %v", key, found, err)
	}
	var out spec3.OpenAPI
	if err := json.Unmarshal(doc.json, &out); err != nil {
		t.Fatalf("decoding /openapi/v3/%s: %v", key, err)
	}
	return &out
}

func TestV2OperationIDs(t *testing.T) {
	s, _ := newTestService(t, coreGroup(), coordinationGroup())
	sw := v2Doc(t, s)
	ids := map[string]string{}
	for path, item := range sw.Paths.Paths {
		for _, op := range []*spec.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op != nil {
				ids[op.ID] = path
			}
		}
	}
	// The ids and paths kube's swagger.json has for these resources.
	want := map[string]string{
		"listCoreV1NamespacedConfigMap":             "/api/v1/namespaces/{namespace}/configmaps",
		"createCoreV1NamespacedConfigMap":           "/api/v1/namespaces/{namespace}/configmaps",
		"deleteCoreV1CollectionNamespacedConfigMap": "/api/v1/namespaces/{namespace}/configmaps",
		"readCoreV1NamespacedConfigMap":             "/api/v1/namespaces/{namespace}/configmaps/{name}",
		"replaceCoreV1NamespacedConfigMap":          "/api/v1/namespaces/{namespace}/configmaps/{name}",
		"patchCoreV1NamespacedConfigMap":            "/api/v1/namespaces/{namespace}/configmaps/{name}",
		"deleteCoreV1NamespacedConfigMap":           "/api/v1/namespaces/{namespace}/configmaps/{name}",
		"watchCoreV1NamespacedConfigMapList":        "/api/v1/watch/namespaces/{namespace}/configmaps",
		"watchCoreV1NamespacedConfigMap":            "/api/v1/watch/namespaces/{namespace}/configmaps/{name}",
		"listCoreV1ConfigMapForAllNamespaces":       "/api/v1/configmaps",
		"watchCoreV1ConfigMapListForAllNamespaces":  "/api/v1/watch/configmaps",
		"readCoreV1Namespace":                       "/api/v1/namespaces/{name}",
		"listCoreV1Namespace":                       "/api/v1/namespaces",
		"watchCoreV1NamespaceList":                  "/api/v1/watch/namespaces",
		"readCoreV1NamespaceStatus":                 "/api/v1/namespaces/{name}/status",
		"patchCoreV1NamespaceStatus":                "/api/v1/namespaces/{name}/status",
		"replaceCoreV1NamespaceFinalize":            "/api/v1/namespaces/{name}/finalize",
		"patchCoordinationV1NamespacedLease":        "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}",
		"listCoordinationV1LeaseForAllNamespaces":   "/apis/coordination.k8s.io/v1/leases",
		"getCoreV1APIResources":                     "/api/v1/",
		"getCoordinationV1APIResources":             "/apis/coordination.k8s.io/v1/",
		"getCoordinationAPIGroup":                   "/apis/coordination.k8s.io/",
		"getCoreAPIVersions":                        "/api/",
		"getAPIVersions":                            "/apis/",
		"getCodeVersion":                            "/version/",
	}
	for id, path := range want {
		if ids[id] != path {
			t.Errorf("operation %s is at %q, want %q", id, ids[id], path)
		}
	}
	if _, ok := ids["listCoreV1NamespaceForAllNamespaces"]; ok {
		t.Error("a cluster-scoped resource has an all-namespaces list")
	}
}

func TestV2Operation(t *testing.T) {
	s, _ := newTestService(t, coreGroup())
	sw := v2Doc(t, s)
	op := sw.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps/{name}"].Patch
	if op == nil {
		t.Fatal("no PATCH of a ConfigMap")
	}
	if got := op.Extensions["x-kubernetes-action"]; got != "patch" {
		t.Errorf("x-kubernetes-action = %v, want patch", got)
	}
	gvk := map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"}
	if got := op.Extensions["x-kubernetes-group-version-kind"]; !reflect.DeepEqual(got, gvk) {
		t.Errorf("x-kubernetes-group-version-kind = %v, want %v", got, gvk)
	}
	params := map[string]bool{}
	// Parameters every operation of a path takes are the path's.
	all := append(slices.Clone(op.Parameters), sw.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps/{name}"].Parameters...)
	for _, p := range all {
		name := p.Name
		if ref := p.Ref.String(); ref != "" { // shared parameters are referenced
			shared := sw.Parameters[ref[len("#/parameters/"):]]
			name = shared.Name
		}
		params[name] = true
	}
	for _, name := range []string{"body", "dryRun", "fieldManager", "fieldValidation", "force", "pretty", "name", "namespace"} {
		if !params[name] {
			t.Errorf("PATCH lacks parameter %q; has %v", name, params)
		}
	}
	if !slices.Contains(op.Consumes, "application/strategic-merge-patch+json") {
		t.Errorf("PATCH consumes %v", op.Consumes)
	}
	if ref := op.Responses.StatusCodeResponses[200].Schema.Ref.String(); ref != "#/definitions/io.k8s.api.core.v1.ConfigMap" {
		t.Errorf("PATCH answers %s", ref)
	}
}

func TestV2Definitions(t *testing.T) {
	s, _ := newTestService(t, coreGroup(), coordinationGroup())
	sw := v2Doc(t, s)
	cm, ok := sw.Definitions["io.k8s.api.core.v1.ConfigMap"]
	if !ok {
		t.Fatal("no definition of ConfigMap")
	}
	want := []any{map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"}}
	if got := cm.Extensions["x-kubernetes-group-version-kind"]; !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigMap's kinds = %v, want %v", got, want)
	}
	if _, ok := sw.Definitions["io.k8s.api.coordination.v1.LeaseList"]; !ok {
		t.Error("no definition of LeaseList")
	}
	if _, ok := sw.Definitions["io.k8s.api.apps.v1.Deployment"]; ok {
		t.Error("definitions of unserved kinds are included")
	}
	// The list extensions come from +listType tags of k8s.io/api.
	fin := sw.Definitions["io.k8s.api.core.v1.NamespaceSpec"].Properties["finalizers"]
	if got := fin.Extensions["x-kubernetes-list-type"]; got != "atomic" {
		t.Errorf("NamespaceSpec.finalizers x-kubernetes-list-type = %v, want atomic", got)
	}
	// swagger 2.0 shows no defaults, as kube's.
	if d := sw.Definitions["io.k8s.api.core.v1.ConfigMap"].Properties["metadata"].Default; d != nil {
		t.Errorf("ConfigMap.metadata has a default %v in v2", d)
	}
	if sw.Info.Title != "Kubernetes" || sw.Info.Version != "v1.37.2" {
		t.Errorf("info = %+v", sw.Info.InfoProps)
	}
}

func TestV3Root(t *testing.T) {
	s, _ := newTestService(t, coreGroup(), coordinationGroup())
	doc, err := s.v3Root()
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc.json, &root); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"api", "api/v1", "apis", "apis/coordination.k8s.io", "apis/coordination.k8s.io/v1", "version"} {
		gv, _, _ := s.v3(key)
		want := "/openapi/v3/" + key + "?hash=" + gv.etag
		if got := root.Paths[key].ServerRelativeURL; got != want {
			t.Errorf("root lists %s at %q, want %q", key, got, want)
		}
	}
	if len(root.Paths) != 6 {
		t.Errorf("root lists %d paths: %v", len(root.Paths), root.Paths)
	}
}

func TestV3GroupVersion(t *testing.T) {
	s, _ := newTestService(t, coreGroup(), coordinationGroup())
	doc := v3Doc(t, s, "api/v1")
	path := doc.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps"]
	if path == nil || path.Post == nil {
		t.Fatal("no POST /api/v1/namespaces/{namespace}/configmaps")
	}
	var found bool
	for _, p := range path.Post.Parameters {
		found = found || (p.Name == "fieldValidation" && p.In == "query")
	}
	if !found {
		t.Error("POST of a ConfigMap lacks the fieldValidation parameter")
	}
	if _, ok := doc.Paths.Paths["/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"]; ok {
		t.Error("api/v1 documents another group")
	}
	schema := doc.Components.Schemas["io.k8s.api.core.v1.ConfigMap"]
	if schema == nil || schema.Properties["data"].Description == "" {
		t.Fatal("no documented ConfigMap schema")
	}
	// Kinds registered in every group version list only theirs and core/v1.
	lease := v3Doc(t, s, "apis/coordination.k8s.io/v1")
	got := lease.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"].Extensions["x-kubernetes-group-version-kind"]
	want := []any{
		map[string]any{"group": "", "version": "v1", "kind": "DeleteOptions"},
		map[string]any{"group": "coordination.k8s.io", "version": "v1", "kind": "DeleteOptions"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DeleteOptions kinds in coordination.k8s.io/v1 = %v, want %v", got, want)
	}
}

func TestUnknownKindLeftOut(t *testing.T) {
	g := coordinationGroup()
	g.Versions[0].Resources = append(g.Versions[0].Resources, metav1APIResource("widgets", "Widget"))
	s, _ := newTestService(t, g)
	doc := v3Doc(t, s, "apis/coordination.k8s.io/v1")
	if _, ok := doc.Paths.Paths["/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"]; !ok {
		t.Error("a kind without a definition took the group version's other resources with it")
	}
	if _, ok := doc.Paths.Paths["/apis/coordination.k8s.io/v1/namespaces/{namespace}/widgets"]; ok {
		t.Error("a kind without a definition is documented")
	}
}
