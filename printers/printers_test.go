package printers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestFor(t *testing.T) {
	for _, gvk := range []schema.GroupVersionKind{
		coreKind("Namespace"), coreKind("ConfigMap"), coreKind("Secret"), coreKind("ServiceAccount"), coreKind("Event"),
		{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, {Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"},
		coreKind("Pod"), {Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler"},
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}, {Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Kind: "FlowSchema"},
	} {
		if For(gvk) == nil {
			t.Errorf("no printer for %s", gvk)
		}
	}
	// kube prints these with the default table.
	for _, gvk := range []schema.GroupVersionKind{
		coreKind("LimitRange"), {Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		{Group: "storage.k8s.io", Version: "v1", Kind: "CSIStorageCapacity"}, coreKind("Nothing"),
	} {
		if c := For(gvk); c != nil {
			t.Errorf("%s has printer %T, want the default table", gvk, c)
		}
	}
}

// printedScheme knows every kind printed: k8s.io/api's and APIService.
var printedScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiregv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// TestEveryPrinter prints an empty object and a list of two of every kind
// and checks that each row has a cell of a plain type per column.
func TestEveryPrinter(t *testing.T) {
	for gvk, c := range convertors {
		obj, err := printedScheme.New(gvk)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		list, err := printedScheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		if err := meta.SetList(list, []runtime.Object{obj, obj.DeepCopyObject()}); err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		for _, o := range []runtime.Object{obj, list} {
			table, err := c.ConvertToTable(t.Context(), o, &metav1.TableOptions{})
			if err != nil {
				t.Fatalf("%s: printing a %T: %v", gvk, o, err)
			}
			checkTable(t, gvk, table)
		}
	}
}

func checkTable(t *testing.T, gvk schema.GroupVersionKind, table *metav1.Table) {
	t.Helper()
	names := map[string]bool{}
	for _, col := range table.ColumnDefinitions {
		if names[col.Name] || col.Priority > 1 || col.Type == "" {
			t.Errorf("%s: column %+v is repeated or malformed", gvk, col)
		}
		names[col.Name] = true
	}
	if !names["Name"] {
		t.Errorf("%s: no Name column", gvk)
	}
	if len(table.Rows) == 0 {
		t.Fatalf("%s: no rows", gvk)
	}
	for _, row := range table.Rows {
		if len(row.Cells) != len(table.ColumnDefinitions) {
			t.Fatalf("%s: %d cells for %d columns: %#v", gvk, len(row.Cells), len(table.ColumnDefinitions), row.Cells)
		}
		for i, cell := range row.Cells {
			switch cell.(type) {
			case string, bool, int64, int32:
			default:
				t.Errorf("%s: cell %d is a %T", gvk, i, cell)
			}
		}
		if row.Object.Object != nil || row.Object.Raw != nil {
			t.Errorf("%s: a row carries an object", gvk)
		}
	}
}

func TestConvertLists(t *testing.T) {
	c := For(coreKind("ConfigMap")).(*TableConvertor[*corev1.ConfigMap])
	c = &TableConvertor[*corev1.ConfigMap]{Columns: c.Columns, Row: c.Row, Now: func() time.Time { return now }}
	list := &corev1.ConfigMapList{Items: []corev1.ConfigMap{
		{ObjectMeta: created("a"), Data: map[string]string{"k": "v"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: ago(3 * 24 * time.Hour)}},
	}}
	table, err := c.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 2 || !equalCells(table.Rows[0].Cells, []any{"a", int64(1), "60m"}) ||
		!equalCells(table.Rows[1].Cells, []any{"b", int64(0), "3d"}) {
		t.Errorf("rows = %+v", table.Rows)
	}
	if got := columnNames(table); got != "Name Data Age" {
		t.Errorf("columns = %s", got)
	}

	table, err = c.ConvertToTable(t.Context(), &corev1.ConfigMapList{}, &metav1.TableOptions{NoHeaders: true})
	if err != nil || table.Rows == nil || len(table.Rows) != 0 || table.ColumnDefinitions != nil {
		t.Errorf("empty list without headers = %+v, %v; want no columns and no rows", table, err)
	}
	if _, err := c.ConvertToTable(t.Context(), &corev1.Secret{}, nil); err == nil {
		t.Error("printed a Secret as a ConfigMap")
	}
	if _, err := c.ConvertToTable(t.Context(), &corev1.SecretList{Items: []corev1.Secret{{}}}, nil); err == nil {
		t.Error("printed a list of Secrets as ConfigMaps")
	}
}

// TestWideColumns checks which columns only -o wide shows.
func TestWideColumns(t *testing.T) {
	for gvk, want := range map[schema.GroupVersionKind]string{
		coreKind("Pod"):   "IP Node Nominated Node Readiness Gates",
		coreKind("Event"): "Subobject Source First Seen Count Name",
		coreKind("Node"):  "Internal-IP External-IP OS-Image Kernel-Version Container-Runtime",
		{Group: "apps", Version: "v1", Kind: "Deployment"}:                               "Containers Images Selector",
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}:         "Users Groups ServiceAccounts",
		{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}:               "",
		{Group: "events.k8s.io", Version: "v1", Kind: "Event"}:                           "Subobject Source First Seen Count Name",
		{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}:           "",
		{Group: "", Version: "v1", Kind: "PersistentVolumeClaim"}:                        "VolumeMode",
		{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}:                   "",
		{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:                     "",
		{Group: "certificates.k8s.io", Version: "v1", Kind: "CertificateSigningRequest"}: "",
	} {
		table, err := For(gvk).ConvertToTable(t.Context(), mustNew(t, gvk), nil)
		if err != nil {
			t.Fatal(err)
		}
		var wide []string
		for _, c := range table.ColumnDefinitions {
			if c.Priority == 1 {
				wide = append(wide, c.Name)
			}
		}
		if got := strings.Join(wide, " "); got != want {
			t.Errorf("%s: wide columns %q, want %q", gvk, got, want)
		}
	}
	table, _ := For(coreKind("Pod")).ConvertToTable(t.Context(), &corev1.Pod{}, nil)
	if got := columnNames(table); got != "Name Ready Status Restarts Age IP Node Nominated Node Readiness Gates" {
		t.Errorf("pod columns = %s", got)
	}
}

func mustNew(t *testing.T, gvk schema.GroupVersionKind) runtime.Object {
	t.Helper()
	obj, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func columnNames(table *metav1.Table) string {
	names := make([]string, len(table.ColumnDefinitions))
	for i, c := range table.ColumnDefinitions {
		names[i] = c.Name
	}
	return strings.Join(names, " ")
}
