package cache

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// setItems sets the Items of a list object (a typed list such as
// ConfigMapList, or an UnstructuredList) to deep copies of elems, whose
// objects must be pointers to the items' type. No items is [], not nil,
// so that it encodes as kube's.
func setItems(list runtime.Object, elems []*element) error {
	ptr, err := meta.GetItemsPtr(list)
	if err != nil {
		return fmt.Errorf("list object %T: %w", list, err)
	}
	items, err := conversion.EnforcePtr(ptr)
	if err != nil || items.Kind() != reflect.Slice {
		return fmt.Errorf("list object %T has no Items slice", list)
	}
	items.Set(reflect.MakeSlice(items.Type(), len(elems), len(elems)))
	itemType := items.Type().Elem()
	ptrType := reflect.PointerTo(itemType)
	copyInto, direct := ptrType.MethodByName("DeepCopyInto")
	direct = direct && copyInto.Type.NumIn() == 2 && copyInto.Type.In(1) == ptrType
	args := make([]reflect.Value, 2)
	for i, e := range elems {
		v := reflect.ValueOf(e.obj)
		if v.Type() != ptrType {
			return fmt.Errorf("cannot list a %T into a %T", e.obj, list)
		}
		if !direct {
			items.Index(i).Set(reflect.ValueOf(e.obj.DeepCopyObject()).Elem())
			continue
		}
		// Straight into the slice: DeepCopyObject would allocate each
		// item once more, only to copy it into the slice.
		args[0], args[1] = v, items.Index(i).Addr()
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
