package handlers

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry/rest"
)

// answerShapes are the shapes an answer of the endpoint may take: tables
// and metadata, for the resource and its status.
func (s *Scope) answerShapes() shapes {
	// Custom resources have no protobuf form of their own: kube skips
	// protobuf for them (their tables and metadata have one).
	_, noProto := s.Storage.New().(runtime.Unstructured)
	if s.Subresource != "" && s.Subresource != "status" {
		return shapes{noProtobuf: noProto}
	}
	// Both metadata shapes are taken, as kube takes them: the one that
	// does not fit the answer is refused when the answer is made.
	return shapes{table: s.servesTables(), metadata: true, metadataList: true, noProtobuf: noProto}
}

// watchShapes are the shapes a watch's events may take: each event's
// object is one object.
func (s *Scope) watchShapes() shapes {
	sh := s.answerShapes()
	sh.metadataList = false
	return sh
}

// servesTables reports whether the resource has tables: one that can be
// listed or has a table of its own, as kube requires of a Table answer. A
// create-only resource (a review, say) answers a Table request with 406.
func (s *Scope) servesTables() bool {
	if s.Table != nil || s.Subresource == "status" {
		return true
	}
	switch s.Storage.(type) {
	case rest.Lister, rest.TableConvertor:
		return true
	}
	return false
}

// toTable converts obj (an object or a list) into a Table, with each row's
// object as includeObject asks (Metadata by default).
func (s *Scope) toTable(r *http.Request, obj runtime.Object, version string) (runtime.Object, error) {
	opts := &metav1.TableOptions{}
	switch r.URL.Query().Get("includeObject") {
	case "None":
		opts.IncludeObject = metav1.IncludeNone
	case "Object":
		opts.IncludeObject = metav1.IncludeObject
	case "", "Metadata":
		opts.IncludeObject = metav1.IncludeMetadata
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: includeObject: Invalid value: %q: must be 'Metadata', 'Object', 'None', or empty",
			r.URL.Query().Get("includeObject")))
	}
	convert := defaultTable
	if s.Table != nil {
		convert = s.Table.ConvertToTable
	}
	table, err := convert(r.Context(), obj, opts)
	if err != nil {
		return nil, err
	}
	if err := s.fillRowObjects(table, obj, opts.IncludeObject, version); err != nil {
		return nil, err
	}
	table.APIVersion = metav1.SchemeGroupVersion.Group + "/" + version
	table.Kind = "Table"
	return table, nil
}

// defaultColumns describe their cells with ObjectMeta's own field docs.
var defaultColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	{Name: "Created At", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
}

// defaultTable is the table of resources without printers: name and age.
func defaultTable(_ context.Context, obj runtime.Object, _ *metav1.TableOptions) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: defaultColumns}
	add := func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return err
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells: []interface{}{m.GetName(), m.GetCreationTimestamp().Time.UTC().Format(time.RFC3339)},
		})
		return nil
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, add); err != nil {
			return nil, err
		}
	} else if err := add(obj); err != nil {
		return nil, err
	}
	return table, nil
}

// fillRowObjects sets each row's object and the table's list metadata;
// a row's metadata is of the table's meta.k8s.io version.
func (s *Scope) fillRowObjects(table *metav1.Table, obj runtime.Object, include metav1.IncludeObjectPolicy, version string) error {
	if li, err := meta.ListAccessor(obj); err == nil && meta.IsListType(obj) {
		table.ResourceVersion = li.GetResourceVersion()
		table.Continue = li.GetContinue()
		table.RemainingItemCount = li.GetRemainingItemCount()
	} else if m, err := meta.Accessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	var items []runtime.Object
	if meta.IsListType(obj) {
		var err error
		if items, err = meta.ExtractList(obj); err != nil {
			return err
		}
	} else {
		items = []runtime.Object{obj}
	}
	for i := range table.Rows {
		// A printer that orders rows itself says which object each is.
		item := table.Rows[i].Object.Object
		if item == nil && i < len(items) {
			item = items[i]
		}
		if item != nil {
			table.Rows[i].Object = s.rowObject(item, include, version)
		}
	}
	return nil
}

func (s *Scope) rowObject(obj runtime.Object, include metav1.IncludeObjectPolicy, version string) runtime.RawExtension {
	switch include {
	case metav1.IncludeObject:
		obj = obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(s.Kind)
		return runtime.RawExtension{Object: obj}
	case metav1.IncludeMetadata:
		pom, err := partialMetadata(obj, version)
		if err != nil {
			return runtime.RawExtension{}
		}
		return runtime.RawExtension{Object: pom}
	}
	return runtime.RawExtension{}
}
