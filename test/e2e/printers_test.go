package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/internal/testkit"
)

// getTable asks for a path of the core group as a Table.
func getTable(t *testing.T, rc rest.Interface, build func(r *rest.Request) *rest.Request) *metav1.Table {
	t.Helper()
	raw, err := build(rc.Get().SetHeader("Accept", e2eutil.TableAccept)).DoRaw(e2eutil.Ctx(t))
	if err != nil {
		t.Fatalf("getting a table: %v", err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil || table.Kind != "Table" {
		t.Fatalf("answer is not a Table (%v): %.300s", err, raw)
	}
	return &table
}

// wantColumns checks the names and priorities of a table's columns.
func wantColumns(t *testing.T, table *metav1.Table, want ...string) {
	t.Helper()
	var got []string
	for _, c := range table.ColumnDefinitions {
		got = append(got, c.Name)
		if c.Priority != 0 {
			t.Errorf("column %s has priority %d", c.Name, c.Priority)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("columns = %v, want %v", got, want)
	}
}

var justCreated = regexp.MustCompile(`^[0-9]+s$`)

func TestTablePrinters(t *testing.T) {
	testkit.Kubectl(t) // build kubectl before the server starts
	// The test counts a namespace's config maps: no kube-root-ca.crt.
	e := e2eutil.Start(t, "--controllers=*,-root-ca-cert-publisher")
	rc := e.Clientset.CoreV1().RESTClient()
	ns := e.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "conf"},
		Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {3}}}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	table := getTable(t, rc, func(r *rest.Request) *rest.Request { return r.Namespace(ns).Resource("configmaps") })
	wantColumns(t, table, "Name", "Data", "Age")
	if table.ColumnDefinitions[2].Description != (metav1.ObjectMeta{}).SwaggerDoc()["creationTimestamp"] {
		t.Errorf("Age is described as %q", table.ColumnDefinitions[2].Description)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows, want 1", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	if cells[0] != "conf" || cells[1] != float64(3) || !justCreated.MatchString(cells[2].(string)) {
		t.Errorf("configmap cells = %#v, want conf, 3, an age in seconds", cells)
	}
	if !strings.Contains(string(table.Rows[0].Object.Raw), `"name":"conf"`) {
		t.Errorf("row object = %s, want the config map's metadata", table.Rows[0].Object.Raw)
	}

	table = getTable(t, rc, func(r *rest.Request) *rest.Request { return r.Resource("namespaces").Name(ns) })
	wantColumns(t, table, "Name", "Status", "Age")
	if cells := table.Rows[0].Cells; cells[0] != ns || cells[1] != "Active" || !justCreated.MatchString(cells[2].(string)) {
		t.Errorf("namespace cells = %#v, want %s, Active, an age in seconds", cells, ns)
	}

	out, errOut, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "configmaps", "-n", ns)
	if err != nil {
		t.Fatalf("kubectl get configmaps: %v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || lines[0] != "NAME   DATA   AGE" || !regexp.MustCompile(`^conf   3      [0-9]+s$`).MatchString(lines[1]) {
		t.Errorf("kubectl get configmaps printed:\n%s", out)
	}
}
