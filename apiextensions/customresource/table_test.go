package customresource

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

var tableNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestTableCells(t *testing.T) {
	columns := []apiextv1.CustomResourceColumnDefinition{
		{Name: "Spec", Type: "string", JSONPath: ".spec.cronSpec", Description: "the schedule"},
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio", Priority: 1},
		{Name: "Paused", Type: "boolean", JSONPath: ".spec.paused"},
		{Name: "Tags", Type: "string", JSONPath: ".spec.tags"},
		{Name: "Template", Type: "string", JSONPath: ".spec.template"},
		{Name: "Last", Type: "date", JSONPath: ".status.lastScheduleTime", Format: "date-time"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}
	c, err := NewTableConvertor(columns)
	if err != nil {
		t.Fatal(err)
	}
	c.Now = func() time.Time { return tableNow }

	created := tableNow.Add(-5 * time.Minute).Format(time.RFC3339)
	tests := []struct {
		name string
		obj  map[string]any
		want []any
	}{
		{"every type",
			map[string]any{
				"spec": map[string]any{"cronSpec": "* * * * */5", "replicas": int64(3), "ratio": 0.5, "paused": true,
					"tags": []any{"a", "b"}, "template": map[string]any{"k": "v"}},
				"status": map[string]any{"lastScheduleTime": tableNow.Add(-3 * time.Hour).Format(time.RFC3339)},
			},
			[]any{"a", "* * * * */5", int64(3), 0.5, true, `["a","b"]`, `{"k":"v"}`, "3h", "5m"}},
		{"missing values are nil",
			map[string]any{},
			[]any{"a", nil, nil, nil, nil, nil, nil, nil, "5m"}},
		{"conversions",
			map[string]any{"spec": map[string]any{"cronSpec": int64(7), "replicas": 2.9, "ratio": int64(2), "paused": "yes"}},
			[]any{"a", "7", int64(2), float64(2), nil, nil, nil, nil, "5m"}},
		{"bad date",
			map[string]any{"status": map[string]any{"lastScheduleTime": "yesterday"}},
			[]any{"a", nil, nil, nil, nil, nil, nil, "<invalid>", "5m"}},
		{"date of the wrong type",
			map[string]any{"status": map[string]any{"lastScheduleTime": int64(3)}},
			[]any{"a", nil, nil, nil, nil, nil, nil, nil, "5m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: tt.obj}
			u.SetAPIVersion("stable.example.com/v1")
			u.SetKind("CronTab")
			u.SetName("a")
			unstructured.SetNestedField(u.Object, created, "metadata", "creationTimestamp")
			table, err := c.ConvertToTable(context.Background(), u, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("rows = %d", len(table.Rows))
			}
			if got := table.Rows[0].Cells; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("cells = %#v\nwant %#v", got, tt.want)
			}
		})
	}

	table, err := c.ConvertToTable(context.Background(), &unstructured.Unstructured{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantDefs := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]},
		{Name: "Spec", Type: "string", Description: "the schedule"},
		{Name: "Replicas", Type: "integer", Description: "Custom resource definition column (in JSONPath format): .spec.replicas"},
		{Name: "Ratio", Type: "number", Description: "Custom resource definition column (in JSONPath format): .spec.ratio", Priority: 1},
		{Name: "Paused", Type: "boolean", Description: "Custom resource definition column (in JSONPath format): .spec.paused"},
		{Name: "Tags", Type: "string", Description: "Custom resource definition column (in JSONPath format): .spec.tags"},
		{Name: "Template", Type: "string", Description: "Custom resource definition column (in JSONPath format): .spec.template"},
		{Name: "Last", Type: "date", Format: "date-time", Description: "Custom resource definition column (in JSONPath format): .status.lastScheduleTime"},
		{Name: "Age", Type: "date", Description: "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp"},
	}
	if !reflect.DeepEqual(table.ColumnDefinitions, wantDefs) {
		t.Errorf("columns = %#v\nwant %#v", table.ColumnDefinitions, wantDefs)
	}
	if got := table.Rows[0].Cells; !reflect.DeepEqual(got, []any{"", nil, nil, nil, nil, nil, nil, nil, nil}) {
		t.Errorf("empty object: cells = %#v", got)
	}
	noHeaders, err := c.ConvertToTable(context.Background(), &unstructured.Unstructured{}, &metav1.TableOptions{NoHeaders: true})
	if err != nil || noHeaders.ColumnDefinitions != nil {
		t.Errorf("noHeaders: columns = %v, %v", noHeaders.ColumnDefinitions, err)
	}
}

func TestTableDefaultColumns(t *testing.T) {
	c, err := NewTableConvertor(nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Now = func() time.Time { return tableNow }
	list := &unstructured.UnstructuredList{}
	for i, age := range []time.Duration{90 * time.Second, 50 * time.Hour} {
		u := cronTab(string(rune('a'+i)), spec(), nil)
		u.SetCreationTimestamp(metav1.NewTime(tableNow.Add(-age)))
		list.Items = append(list.Items, *u)
	}
	table, err := c.ConvertToTable(context.Background(), list, &metav1.TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantDefs := []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]},
		{Name: "Age", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	}
	if !reflect.DeepEqual(table.ColumnDefinitions, wantDefs) {
		t.Errorf("columns = %#v\nwant %#v", table.ColumnDefinitions, wantDefs)
	}
	var got [][]any
	for _, r := range table.Rows {
		got = append(got, r.Cells)
	}
	if want := [][]any{{"a", "90s"}, {"b", "2d2h"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows = %v, want %v", got, want)
	}

	empty, err := c.ConvertToTable(context.Background(), &unstructured.UnstructuredList{}, nil)
	if err != nil || empty.Rows == nil || len(empty.Rows) != 0 {
		t.Errorf("empty list: rows = %#v, %v", empty.Rows, err)
	}
}

func TestTableBadColumn(t *testing.T) {
	c, err := NewTableConvertor([]apiextv1.CustomResourceColumnDefinition{
		{Name: "Good", Type: "string", JSONPath: ".spec.cronSpec"},
		{Name: "Bad", Type: "string", JSONPath: ".spec[?("},
		{Name: "After", Type: "string", JSONPath: ".spec.image"},
	})
	if err == nil || !strings.Contains(err.Error(), `unrecognized column definition ".spec[?("`) {
		t.Errorf("err = %v", err)
	}
	// the columns before the bad one still print
	table, err := c.ConvertToTable(context.Background(), cronTab("a", spec(), nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 2 || !reflect.DeepEqual(table.Rows[0].Cells, []any{"a", "* * * * */5"}) {
		t.Errorf("table = %v %v", table.ColumnDefinitions, table.Rows)
	}
}

func TestScaleTable(t *testing.T) {
	c := NewScaleTableConvertor(cronTabScale())
	c.Now = func() time.Time { return tableNow }
	s := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: metav1.NewTime(tableNow.Add(-time.Hour))},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
		Status:     autoscalingv1.ScaleStatus{Replicas: 1},
	}
	table, err := c.ConvertToTable(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range table.ColumnDefinitions {
		names = append(names, d.Name)
	}
	if want := []string{"Name", "Desired", "Available", "Age"}; !reflect.DeepEqual(names, want) {
		t.Errorf("columns = %v, want %v", names, want)
	}
	if want := []any{"a", int64(3), int64(1), "60m"}; !reflect.DeepEqual(table.Rows[0].Cells, want) {
		t.Errorf("cells = %#v, want %#v", table.Rows[0].Cells, want)
	}
}
