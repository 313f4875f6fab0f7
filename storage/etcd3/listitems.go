package etcd3

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// listItems appends decoded objects to the Items slice of a list object
// (a typed list such as ConfigMapList, or an UnstructuredList).
type listItems struct {
	items   reflect.Value // the Items slice
	newItem func() runtime.Object
}

func newListItems(list runtime.Object) (*listItems, error) {
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return nil, fmt.Errorf("list object %T: %w", list, err)
	}
	v, err := conversion.EnforcePtr(ptr)
	if err != nil || v.Kind() != reflect.Slice {
		return nil, fmt.Errorf("list object %T has no Items slice", list)
	}
	elem := v.Type().Elem()
	if elem.Kind() != reflect.Struct {
		return nil, fmt.Errorf("list object %T: items of kind %v are not supported", list, elem.Kind())
	}
	v.SetLen(0)
	newItem := func() runtime.Object { return reflect.New(elem).Interface().(runtime.Object) }
	// Items of an unstructured list keep the list's apiVersion.
	if ul, ok := list.(*unstructured.UnstructuredList); ok && ul.GetAPIVersion() != "" {
		apiVersion := ul.GetAPIVersion()
		newItem = func() runtime.Object {
			return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion}}
		}
	}
	return &listItems{items: v, newItem: newItem}, nil
}

func (l *listItems) len() int { return l.items.Len() }

func (l *listItems) append(obj runtime.Object) {
	l.items.Set(reflect.Append(l.items, reflect.ValueOf(obj).Elem()))
}

// finish makes an empty list's Items an empty slice rather than nil, so
// that it encodes as [] like kube's.
func (l *listItems) finish() {
	if l.items.IsNil() {
		l.items.Set(reflect.MakeSlice(l.items.Type(), 0, 0))
	}
}
