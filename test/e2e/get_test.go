package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestGetShapes: GETs served from the watch cache's shared objects (their
// encodings made once) answer in every shape and format, the same bytes
// each time while the object is unchanged, and the new state after a
// write.
func TestGetShapes(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Client(t).CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shapes"}, Data: map[string]string{"k": "v1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(accept string) []byte {
		t.Helper()
		r := e.Do(t, "GET", e2eutil.CMPath(ns, "shapes"), nil, "Accept", accept)
		if r.Code != 200 {
			t.Fatalf("GET as %s: %d %s", accept, r.Code, r.Body)
		}
		return r.Body
	}
	twice := func(accept string) []byte {
		t.Helper()
		first, second := get(accept), get(accept)
		if !bytes.Equal(first, second) {
			t.Errorf("two GETs as %s of an unchanged object differ:\n%s\n%s", accept, first, second)
		}
		return first
	}

	var asJSON corev1.ConfigMap
	if err := json.Unmarshal(twice("application/json"), &asJSON); err != nil {
		t.Fatal(err)
	}
	if asJSON.Kind != "ConfigMap" || asJSON.APIVersion != "v1" || asJSON.Data["k"] != "v1" || asJSON.ResourceVersion != cm.ResourceVersion {
		t.Errorf("JSON GET = %+v", asJSON)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(twice(protobuf), nil, nil)
	if pb, ok := obj.(*corev1.ConfigMap); err != nil || !ok || pb.Data["k"] != "v1" || pb.ResourceVersion != cm.ResourceVersion {
		t.Errorf("protobuf GET = %#v, %v", obj, err)
	}
	// A Table's Age cell follows the clock, so two Tables are compared
	// with their Age cells blanked.
	tableOnce := func() (metav1.Table, []byte) {
		t.Helper()
		var table metav1.Table
		if err := json.Unmarshal(get("application/json;as=Table;v=v1;g=meta.k8s.io"), &table); err != nil {
			t.Fatal(err)
		}
		for i, c := range table.ColumnDefinitions {
			if c.Name == "Age" {
				for _, row := range table.Rows {
					row.Cells[i] = ""
				}
			}
		}
		b, err := json.Marshal(table)
		if err != nil {
			t.Fatal(err)
		}
		return table, b
	}
	table, first := tableOnce()
	if _, second := tableOnce(); !bytes.Equal(first, second) {
		t.Errorf("two Table GETs of an unchanged object differ beyond Age:\n%s\n%s", first, second)
	}
	if table.Kind != "Table" || len(table.Rows) != 1 || len(table.Rows[0].Cells) == 0 || table.Rows[0].Cells[0] != "shapes" {
		t.Errorf("Table GET = %+v", table)
	}
	var pom metav1.PartialObjectMetadata
	if err := json.Unmarshal(twice("application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"), &pom); err != nil {
		t.Fatal(err)
	}
	if pom.Kind != "PartialObjectMetadata" || pom.Name != "shapes" || pom.ResourceVersion != cm.ResourceVersion {
		t.Errorf("PartialObjectMetadata GET = %+v", pom)
	}

	cm.Data["k"] = "v2"
	updated, err := cms.Update(e2eutil.Ctx(t), cm, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, accept := range []string{"application/json", protobuf} {
		var got runtime.Object
		if got, _, err = scheme.Codecs.UniversalDeserializer().Decode(get(accept), nil, nil); err != nil {
			t.Fatal(err)
		}
		if c := got.(*corev1.ConfigMap); c.Data["k"] != "v2" || c.ResourceVersion != updated.ResourceVersion {
			t.Errorf("GET as %s after an update at %s: %s %v", accept, updated.ResourceVersion, c.ResourceVersion, c.Data)
		}
	}
}
