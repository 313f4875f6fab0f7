package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTable(t *testing.T) {
	// The test counts a namespace's config maps: no kube-root-ca.crt.
	e := start(t, "--controllers=*,-root-ca-cert-publisher")
	ns := e.namespace(t)
	e.configMap(t, ns, "a", map[string]string{"l": "1"})
	e.configMap(t, ns, "b", nil)
	table := func(path, accept string) metav1.Table {
		t.Helper()
		r := e.do(t, http.MethodGet, path, nil, "Accept", accept)
		var tb metav1.Table
		if err := json.Unmarshal(r.body, &tb); r.code != 200 || err != nil || tb.Kind != "Table" || tb.APIVersion != "meta.k8s.io/v1" {
			t.Fatalf("GET %s as Table = %d %.300s", path, r.code, r.body)
		}
		return tb
	}
	tb := table(cmPath(ns, ""), tableAccept+", application/json")
	if len(tb.ColumnDefinitions) < 2 || tb.ColumnDefinitions[0].Name != "Name" || tb.ColumnDefinitions[0].Format != "name" {
		t.Fatalf("columns = %+v", tb.ColumnDefinitions)
	}
	if len(tb.Rows) != 2 || tb.Rows[0].Cells[0] != "a" || tb.Rows[1].Cells[0] != "b" || tb.ResourceVersion == "" {
		t.Fatalf("rows = %+v, resourceVersion %q", tb.Rows, tb.ResourceVersion)
	}
	var pom metav1.PartialObjectMetadata
	if err := json.Unmarshal(tb.Rows[0].Object.Raw, &pom); err != nil || pom.Kind != "PartialObjectMetadata" ||
		pom.APIVersion != "meta.k8s.io/v1" || pom.Name != "a" || pom.Labels["l"] != "1" {
		t.Fatalf("row object = %s", tb.Rows[0].Object.Raw)
	}
	full := table(cmPath(ns, "a")+"?includeObject=Object", tableAccept)
	var obj map[string]any
	if err := json.Unmarshal(full.Rows[0].Object.Raw, &obj); err != nil || obj["kind"] != "ConfigMap" || obj["data"] == nil {
		t.Fatalf("includeObject=Object row = %s", full.Rows[0].Object.Raw)
	}
	if none := table(cmPath(ns, "")+"?includeObject=None", tableAccept); none.Rows[0].Object.Raw != nil {
		t.Fatalf("includeObject=None row = %s", none.Rows[0].Object.Raw)
	}
	e.do(t, http.MethodGet, cmPath(ns, ""), nil, "Accept", "application/json;as=Table;v=v9;g=meta.k8s.io").
		wantStatus(t, 406, metav1.StatusReasonNotAcceptable, "")

	// A watch streams rows.
	lines := watchLinesAs(t, e, cmPath(ns, "")+"?watch=true&timeoutSeconds=2", tableAccept, 2)
	for i, line := range lines {
		var ev struct {
			Type   string
			Object metav1.Table
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Kind != "Table" || len(ev.Object.Rows) != 1 {
			t.Fatalf("table watch event %d = %s", i, line)
		}
	}
}

// TestTableRefusedWithoutTables: a resource that cannot be listed and has
// no table (a SelfSubjectAccessReview) answers a Table request with 406,
// as kube does (the conformance spec "should return a 406 for a backend
// which does not implement metadata").
func TestTableRefusedWithoutTables(t *testing.T) {
	e := start(t)
	body := []byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`)
	path := "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	e.do(t, http.MethodPost, path, body, "Accept", tableAccept).wantStatus(t, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")
	if r := e.do(t, http.MethodPost, path, body, "Accept", tableAccept+", application/json"); r.code != http.StatusCreated {
		t.Errorf("with JSON as the fallback: %d %.300s", r.code, r.body)
	}
}
