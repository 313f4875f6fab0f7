package cache

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// fillList puts elems in the list: as opts.SharedItems when it asks for
// them and the list's items are typed, else in its Items.
func (c *Cacher) fillList(list runtime.Object, elems []*element, opts storage.ListOptions) error {
	if opts.SharedItems == nil || opts.Objects != storage.CachedObjects {
		return c.setItems(list, elems, opts.Objects)
	}
	ptrType, err := itemPtrType(list)
	if err != nil {
		return err
	}
	if ptrType == reflect.TypeFor[*unstructured.Unstructured]() {
		return c.setItems(list, elems, opts.Objects)
	}
	if err := c.checkItemTypes(elems, ptrType, list); err != nil {
		return err
	}
	*opts.SharedItems = listItems{c: c, elems: elems}
	return nil
}

// checkItemTypes checks that the objects of elems are of type ptrType.
func (c *Cacher) checkItemTypes(elems []*element, ptrType reflect.Type, list runtime.Object) error {
	if c.codec != nil {
		if t := reflect.TypeOf(c.newFunc()); t != ptrType && len(elems) > 0 {
			return fmt.Errorf("cannot list a %s into a %T", t, list)
		}
		return nil
	}
	for _, e := range elems {
		if reflect.TypeOf(e.obj) != ptrType {
			return fmt.Errorf("cannot list a %T into a %T", e.obj, list)
		}
	}
	return nil
}

// itemPtrType is the type of a pointer to one of list's items.
func itemPtrType(list runtime.Object) (reflect.Type, error) {
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return nil, fmt.Errorf("list object %T: %w", list, err)
	}
	items, err := conversion.EnforcePtr(ptr)
	if err != nil || items.Kind() != reflect.Slice {
		return nil, fmt.Errorf("list object %T has no Items slice", list)
	}
	return reflect.PointerTo(items.Type().Elem()), nil
}

// setItems sets the Items of a list object (a typed list such as
// ConfigMapList, or an UnstructuredList) to the objects of elems, which
// must be pointers to the items' type. No items is [], not nil, so that
// it encodes as kube's.
//
// With storage.CopiedObjects (the default) each item is the caller's to
// change. Otherwise, in a cache that keeps objects decoded, each item is
// a shallow copy of the cache's object, as kube's cacher lists: the
// struct is the list's own, but its maps, slices and pointers are the
// cache's, so a list costs a slice of structs rather than a copy of every
// object. Its receiver (the list handler, which only encodes) must not
// change what they share. Unstructured items are a map and nothing else,
// so they are always copied. A cache that keeps objects encoded shares
// its decodings the same way, or decodes each item anew for the list
// with storage.CopiedObjects.
func (c *Cacher) setItems(list runtime.Object, elems []*element, objects storage.ObjectSharing) error {
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return fmt.Errorf("list object %T: %w", list, err)
	}
	items, err := conversion.EnforcePtr(ptr)
	if err != nil || items.Kind() != reflect.Slice {
		return fmt.Errorf("list object %T has no Items slice", list)
	}
	itemType := items.Type().Elem()
	ptrType := reflect.PointerTo(itemType)
	if err := c.checkItemTypes(elems, ptrType, list); err != nil {
		return err
	}
	items.Set(reflect.MakeSlice(items.Type(), len(elems), len(elems)))
	if c.codec != nil || objects != storage.CopiedObjects && itemType != reflect.TypeFor[unstructured.Unstructured]() {
		read := c.object
		if objects == storage.CopiedObjects {
			read = c.ownObject
		}
		for i, e := range elems {
			obj, err := read(e)
			if err != nil {
				return err
			}
			items.Index(i).Set(reflect.ValueOf(obj).Elem())
		}
		return nil
	}
	copyInto, direct := ptrType.MethodByName("DeepCopyInto")
	direct = direct && copyInto.Type.NumIn() == 2 && copyInto.Type.In(1) == ptrType
	args := make([]reflect.Value, 2)
	for i, e := range elems {
		if !direct {
			items.Index(i).Set(reflect.ValueOf(e.obj.DeepCopyObject()).Elem())
			continue
		}
		// Straight into the slice: DeepCopyObject would allocate each
		// item once more, only to copy it into the slice.
		args[0], args[1] = reflect.ValueOf(e.obj), items.Index(i).Addr()
		copyInto.Func.Call(args)
	}
	return nil
}

// setListMeta sets the list's resourceVersion, continue token and
// remaining item count.
func setListMeta(list runtime.Object, rv uint64, continueToken string, remaining *int64) error {
	m, err := meta.ListAccessor(list)
	if err != nil {
		return fmt.Errorf("setting list metadata: %w", err)
	}
	m.SetResourceVersion(formatRV(rv))
	m.SetContinue(continueToken)
	m.SetRemainingItemCount(remaining)
	return nil
}
