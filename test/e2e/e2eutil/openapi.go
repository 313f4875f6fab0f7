package e2eutil

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/capstan-io/capstan/internal/testkit"
)

// /openapi/v2 is the swagger document client-go reads as protobuf, with
// the kinds of the definitions, and answers 304 to its ETag.
func (e *Env) CheckOpenAPIV2(t *testing.T) {
	doc, err := e.Clientset.Discovery().OpenAPISchema()
	if err != nil {
		t.Fatalf("discovery OpenAPISchema: %v", err)
	}
	var found bool
	for _, def := range doc.GetDefinitions().GetAdditionalProperties() {
		if def.GetName() != "io.k8s.api.core.v1.ConfigMap" {
			continue
		}
		for _, ext := range def.GetValue().GetVendorExtension() {
			found = found || (ext.GetName() == "x-kubernetes-group-version-kind" && strings.Contains(ext.GetValue().GetYaml(), "kind: ConfigMap"))
		}
	}
	if !found {
		t.Error("the protobuf document has no ConfigMap definition with its kind")
	}

	r := e.Do(t, http.MethodGet, "/openapi/v2", nil)
	var sw spec.Swagger
	if err := json.Unmarshal(r.Body, &sw); err != nil {
		t.Fatalf("decoding /openapi/v2 (%d): %v", r.Code, err)
	}
	want := []any{map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"}}
	if got := sw.Definitions["io.k8s.api.core.v1.ConfigMap"].Extensions["x-kubernetes-group-version-kind"]; !jsonEqual(got, want) {
		t.Errorf("ConfigMap's kinds = %v, want %v", got, want)
	}
	if op := sw.Paths.Paths["/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"].Patch; op == nil || op.ID != "patchCoordinationV1NamespacedLease" {
		t.Errorf("PATCH of a Lease: %+v", op)
	}
	etag := r.Header.Get("ETag")
	if again := e.Do(t, http.MethodGet, "/openapi/v2", nil, "If-None-Match", etag); again.Code != http.StatusNotModified {
		t.Errorf("If-None-Match %s: %d, want 304", etag, again.Code)
	}
}

// /openapi/v3 lists the group versions; client-go follows the hashed URLs.
func (e *Env) CheckOpenAPIV3(t *testing.T) {
	paths, err := e.Clientset.Discovery().OpenAPIV3().Paths()
	if err != nil {
		t.Fatalf("OpenAPIV3 Paths: %v", err)
	}
	for _, key := range []string{"api/v1", "apis/coordination.k8s.io/v1"} {
		if _, ok := paths[key]; !ok {
			t.Errorf("/openapi/v3 does not list %s", key)
		}
	}
	body, err := paths["api/v1"].Schema("application/json")
	if err != nil {
		t.Fatalf("api/v1 document: %v", err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	path := doc.Paths.Paths["/api/v1/namespaces/{namespace}/configmaps"]
	if path == nil || path.Post == nil || !slices.ContainsFunc(path.Post.Parameters, func(p *spec3.Parameter) bool {
		return p.Name == "fieldValidation" && p.In == "query"
	}) {
		t.Error("POST /api/v1/namespaces/{namespace}/configmaps has no fieldValidation parameter")
	}

	hc := e.HTTPClient(t)
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r := DoWith(t, hc, http.MethodGet, e.URL+"/openapi/v3/api/v1?hash=0123", nil)
	if loc := r.Header.Get("Location"); r.Code != http.StatusMovedPermanently || !strings.HasPrefix(loc, "/openapi/v3/api/v1?hash=") {
		t.Errorf("a stale hash: %d to %q, want 301 to the current one", r.Code, loc)
	}
	r = DoWith(t, hc, http.MethodGet, e.URL+r.Header.Get("Location"), nil)
	if r.Code != http.StatusOK || r.Header.Get("Cache-Control") != "public, immutable" {
		t.Errorf("the current hash: %d, Cache-Control %q", r.Code, r.Header.Get("Cache-Control"))
	}
}

// kubectl validates manifests with the documents: apply works, an unknown
// field is refused (the server does it, strictly, as kubectl asks once the
// document shows fieldValidation), and explain reads the schemas.
func (e *Env) CheckOpenAPIKubectl(t *testing.T) {
	ns := e.Namespace(t)
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: " + ns + "\ndata:\n  k: v\n"
	out, errOut, err := testkit.RunKubectl(t, e.Kubeconfig, strings.NewReader(manifest), "apply", "-f", "-")
	if err != nil || !strings.Contains(out, "configmap/applied created") {
		t.Fatalf("kubectl apply: %v\n%s%s", err, out, errOut)
	}
	// Applying again patches with a strategic merge patch kubectl computes
	// from the schema.
	changed := strings.Replace(manifest, "k: v", "k: w", 1)
	out, errOut, err = testkit.RunKubectl(t, e.Kubeconfig, strings.NewReader(changed), "apply", "-f", "-")
	if err != nil || !strings.Contains(out, "configmap/applied configured") {
		t.Fatalf("kubectl apply of a change: %v\n%s%s", err, out, errOut)
	}

	bad := strings.Replace(manifest, "name: applied", "name: bad\n  colour: blue", 1)
	_, errOut, err = testkit.RunKubectl(t, e.Kubeconfig, strings.NewReader(bad), "apply", "-f", "-")
	want := `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.colour"`
	if err == nil || !strings.Contains(errOut, want) {
		t.Errorf("kubectl apply of an unknown field: %v\n%s\nwant the error %s", err, errOut, want)
	}

	out, errOut, err = testkit.RunKubectl(t, e.Kubeconfig, nil, "explain", "configmap.data")
	if err != nil || !strings.Contains(out, "FIELD: data <map[string]string>") || !strings.Contains(out, "Data contains the configuration data.") {
		t.Errorf("kubectl explain configmap.data: %v\n%s%s", err, out, errOut)
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
