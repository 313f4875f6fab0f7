package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTable(t *testing.T) {
	// The test counts a namespace's config maps: no kube-root-ca.crt.
	e := e2eutil.Start(t, "--controllers=*,-root-ca-cert-publisher")
	ns := e.Namespace(t)
	e.ConfigMap(t, ns, "a", map[string]string{"l": "1"})
	e.ConfigMap(t, ns, "b", nil)
	table := func(path, accept string) metav1.Table {
		t.Helper()
		r := e.Do(t, http.MethodGet, path, nil, "Accept", accept)
		var tb metav1.Table
		if err := json.Unmarshal(r.Body, &tb); r.Code != 200 || err != nil || tb.Kind != "Table" || tb.APIVersion != "meta.k8s.io/v1" {
			t.Fatalf("GET %s as Table = %d %.300s", path, r.Code, r.Body)
		}
		return tb
	}
	tb := table(e2eutil.CMPath(ns, ""), e2eutil.TableAccept+", application/json")
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
	full := table(e2eutil.CMPath(ns, "a")+"?includeObject=Object", e2eutil.TableAccept)
	var obj map[string]any
	if err := json.Unmarshal(full.Rows[0].Object.Raw, &obj); err != nil || obj["kind"] != "ConfigMap" || obj["data"] == nil {
		t.Fatalf("includeObject=Object row = %s", full.Rows[0].Object.Raw)
	}
	if none := table(e2eutil.CMPath(ns, "")+"?includeObject=None", e2eutil.TableAccept); none.Rows[0].Object.Raw != nil {
		t.Fatalf("includeObject=None row = %s", none.Rows[0].Object.Raw)
	}
	e.Do(t, http.MethodGet, e2eutil.CMPath(ns, ""), nil, "Accept", "application/json;as=Table;v=v9;g=meta.k8s.io").
		WantStatus(t, 406, metav1.StatusReasonNotAcceptable, "")

	// A watch streams rows.
	lines := watchLinesAs(t, e, e2eutil.CMPath(ns, "")+"?watch=true&timeoutSeconds=2", e2eutil.TableAccept, 2)
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
	e := e2eutil.Start(t)
	body := []byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`)
	path := "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	e.Do(t, http.MethodPost, path, body, "Accept", e2eutil.TableAccept).WantStatus(t, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")
	if r := e.Do(t, http.MethodPost, path, body, "Accept", e2eutil.TableAccept+", application/json"); r.Code != http.StatusCreated {
		t.Errorf("with JSON as the fallback: %d %.300s", r.Code, r.Body)
	}
}
