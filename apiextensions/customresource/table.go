package customresource

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/util/jsonpath"

	"github.com/capstan-io/capstan/registry/rest"
)

// objectMetaDoc holds ObjectMeta's field docs, the descriptions of the Name
// and Age columns.
var objectMetaDoc = metav1.ObjectMeta{}.SwaggerDoc()

// ageColumn is the column a CRD version without additionalPrinterColumns
// is printed with, after Name.
func ageColumn() apiextv1.CustomResourceColumnDefinition {
	return apiextv1.CustomResourceColumnDefinition{
		Name: "Age", Type: "date", Description: objectMetaDoc["creationTimestamp"],
		JSONPath: ".metadata.creationTimestamp",
	}
}

// TableConvertor prints custom resources (or any object, through its
// unstructured form) in the additionalPrinterColumns of a CRD version,
// after a leading Name column.
type TableConvertor struct {
	columns []metav1.TableColumnDefinition // Name first
	paths   []*jsonpath.JSONPath           // one per column after Name
	// Now is the clock date cells are measured against; time.Now when nil.
	Now func() time.Time
}

var _ rest.TableConvertor = (*TableConvertor)(nil)

// NewTableConvertor returns the convertor of a CRD version's
// additionalPrinterColumns; without any, the columns are Name and Age.
// When a column's jsonPath does not parse, it returns the convertor of the
// columns before it together with the error, which the caller may log and
// serve anyway, as kube does.
func NewTableConvertor(columns []apiextv1.CustomResourceColumnDefinition) (*TableConvertor, error) {
	if len(columns) == 0 {
		columns = []apiextv1.CustomResourceColumnDefinition{ageColumn()}
	}
	c := &TableConvertor{columns: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]},
	}}
	for _, col := range columns {
		p := jsonpath.New(col.Name)
		if err := p.Parse("{" + col.JSONPath + "}"); err != nil {
			return c, fmt.Errorf("unrecognized column definition %q", col.JSONPath)
		}
		p.AllowMissingKeys(true)
		desc := col.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + col.JSONPath
		}
		c.paths = append(c.paths, p)
		c.columns = append(c.columns, metav1.TableColumnDefinition{
			Name: col.Name, Type: col.Type, Format: col.Format, Description: desc, Priority: col.Priority,
		})
	}
	return c, nil
}

// NewScaleTableConvertor returns the convertor of the Scale objects of a
// CRD version's scale subresource: Desired and Available replicas, when
// the subresource names their paths, and Age.
func NewScaleTableConvertor(scale *apiextv1.CustomResourceSubresourceScale) *TableConvertor {
	var cols []apiextv1.CustomResourceColumnDefinition
	if scale != nil && scale.SpecReplicasPath != "" {
		cols = append(cols, apiextv1.CustomResourceColumnDefinition{
			Name: "Desired", Type: "integer", Description: "Number of desired replicas", JSONPath: ".spec.replicas",
		})
	}
	if scale != nil && scale.StatusReplicasPath != "" {
		cols = append(cols, apiextv1.CustomResourceColumnDefinition{
			Name: "Available", Type: "integer", Description: "Number of actual replicas", JSONPath: ".status.replicas",
		})
	}
	cols = append(cols, ageColumn())
	c, _ := NewTableConvertor(cols) // these paths parse
	return c
}

// ConvertToTable prints obj, one object or a list of them. Rows carry no
// object: the handler fills them as includeObject asks.
func (c *TableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error) {
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	table := &metav1.Table{}
	if opts == nil || !opts.NoHeaders {
		table.ColumnDefinitions = slices.Clone(c.columns)
	}
	add := func(o runtime.Object) error {
		row, err := c.row(o, now)
		if err != nil {
			return err
		}
		table.Rows = append(table.Rows, row)
		return nil
	}
	if meta.IsListType(obj) {
		table.Rows = []metav1.TableRow{}
		if err := meta.EachListItem(obj, add); err != nil {
			return nil, err
		}
		return table, nil
	}
	if err := add(obj); err != nil {
		return nil, err
	}
	return table, nil
}

// row prints one object: its name, then each column's cell.
func (c *TableConvertor) row(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return metav1.TableRow{}, err
	}
	var content map[string]any
	if u, ok := obj.(runtime.Unstructured); ok {
		content = u.UnstructuredContent()
	} else if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
		return metav1.TableRow{}, err
	}
	cells := make([]any, 0, len(c.columns))
	cells = append(cells, m.GetName())
	var buf bytes.Buffer
	for i, p := range c.paths {
		cells = append(cells, cell(p, c.columns[i+1].Type, content, now, &buf))
	}
	return metav1.TableRow{Cells: cells}, nil
}

// cell is the value at p in content as a column of type typ shows it: nil
// when missing or not of the column's type, a string column's value as
// jsonpath prints it (objects and arrays as JSON), a date as the time since.
func cell(p *jsonpath.JSONPath, typ string, content map[string]any, now time.Time, buf *bytes.Buffer) any {
	results, err := p.FindResults(content)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	// Columns are simple paths: the first result is the only one.
	value := results[0][0].Interface()
	if typ == "string" {
		buf.Reset()
		if err := p.PrintResults(buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
			return nil
		}
		return buf.String()
	}
	return typedCell(typ, value, now)
}

// typedCell is a JSON value in a column of a non-string type.
func typedCell(typ string, value any, now time.Time) any {
	switch typ {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "date":
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			if t.IsZero() {
				return "<unknown>"
			}
			return duration.HumanDuration(now.Sub(t.Time))
		}
	}
	return nil
}
