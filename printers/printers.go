// Package printers turns built-in objects into the tables kubectl prints:
// the same columns, in the same order, with the same cell values as
// kube-apiserver's server-side printers, written on the versioned types of
// k8s.io/api.
//
// The server always prints every column, the -o wide ones (priority 1)
// included; kubectl hides those unless asked. Rows carry no object: the
// handler fills them as the request's includeObject asks.
package printers

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

// RowFunc prints one object as of now.
type RowFunc[T runtime.Object] func(obj T, now time.Time) (metav1.TableRow, error)

// TableConvertor prints objects of type T, and lists of them, in Columns.
type TableConvertor[T runtime.Object] struct {
	Columns []metav1.TableColumnDefinition
	Row     RowFunc[T]
	// ListRows, when set, prints the items of a list together, for a type
	// whose rows depend on each other (which StorageClass is the default).
	ListRows func(items []T, now time.Time) ([]metav1.TableRow, error)
	// Now is the clock ages are measured with; time.Now when nil.
	Now func() time.Time
}

var _ rest.TableConvertor = (*TableConvertor[runtime.Object])(nil)

// New returns the convertor of a type with the given columns and row.
func New[T runtime.Object](columns []metav1.TableColumnDefinition, row RowFunc[T]) *TableConvertor[T] {
	return &TableConvertor[T]{Columns: columns, Row: row}
}

// ConvertToTable prints obj, an object of type T or a list of them.
func (c *TableConvertor[T]) ConvertToTable(_ context.Context, obj runtime.Object, opts *metav1.TableOptions) (*metav1.Table, error) {
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	table := &metav1.Table{}
	if opts == nil || !opts.NoHeaders {
		table.ColumnDefinitions = slices.Clone(c.Columns)
	}
	if !meta.IsListType(obj) {
		item, ok := obj.(T)
		if !ok {
			return nil, fmt.Errorf("printers: cannot print a %T as a table of %T", obj, *new(T))
		}
		row, err := c.Row(item, now)
		if err != nil {
			return nil, err
		}
		table.Rows = []metav1.TableRow{row}
		return table, nil
	}
	items, err := listItems[T](obj)
	if err != nil {
		return nil, err
	}
	if c.ListRows != nil {
		if table.Rows, err = c.ListRows(items, now); err != nil {
			return nil, err
		}
		return table, nil
	}
	table.Rows = make([]metav1.TableRow, 0, len(items))
	for _, item := range items {
		row, err := c.Row(item, now)
		if err != nil {
			return nil, err
		}
		table.Rows = append(table.Rows, row)
	}
	return table, nil
}

// listItems returns the items of a list, each of type T.
func listItems[T runtime.Object](list runtime.Object) ([]T, error) {
	var items []T
	err := meta.EachListItem(list, func(o runtime.Object) error {
		item, ok := o.(T)
		if !ok {
			return fmt.Errorf("printers: cannot print a %T in a table of %T", o, *new(T))
		}
		items = append(items, item)
		return nil
	})
	return items, err
}

// rowOf is the row of the given cells.
func rowOf(cells ...any) (metav1.TableRow, error) {
	return metav1.TableRow{Cells: cells}, nil
}

// For returns the convertor of a kind, or nil when kube prints it with the
// default Name and Created At table.
func For(gvk schema.GroupVersionKind) rest.TableConvertor {
	if c, ok := convertors[gvk]; ok {
		return c
	}
	return nil
}

// convertors holds every printer, by the kind it prints.
var convertors = merge(
	coreConvertors, eventsConvertors, coordinationConvertors, appsConvertors, batchConvertors,
	autoscalingConvertors, policyConvertors, networkingConvertors, discoveryConvertors,
	storageConvertors, schedulingConvertors, nodeConvertors, certificatesConvertors,
	rbacConvertors, flowcontrolConvertors, admissionregistrationConvertors, apiregistrationConvertors,
	resourceConvertors, apis137Convertors,
)

func merge(groups ...map[schema.GroupVersionKind]rest.TableConvertor) map[schema.GroupVersionKind]rest.TableConvertor {
	out := map[schema.GroupVersionKind]rest.TableConvertor{}
	for _, g := range groups {
		for gvk, c := range g {
			if _, dup := out[gvk]; dup {
				panic("printers: two printers for " + gvk.String())
			}
			out[gvk] = c
		}
	}
	return out
}
