package handlers

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The items of a list of built-in kinds carry no kind and apiVersion in
// kube's answers: its storage converts them to the requested version
// without setting either, and clients (client-go's decoders, kubectl) fill
// them in from the list. capstan's storage keeps both on its objects (the
// encoder would otherwise set them on the watch cache's shared objects),
// so they are taken off on the way out. Custom resources keep theirs, as in
// kube (an unstructured object is its map), and so do the items of a
// PartialObjectMetadataList, which kube sets.

// typedItemsWithoutKinds clears the kind and apiVersion of the items of
// list when it is a list of built-in kinds. The items are the list's own
// copies (a typed list holds values), so the objects they were copied
// from, the watch cache's, stay as they are.
func typedItemsWithoutKinds(list runtime.Object) {
	if !itemsLoseKinds(list) {
		return
	}
	_ = meta.EachListItem(list, func(item runtime.Object) error {
		if k := item.GetObjectKind(); !k.GroupVersionKind().Empty() {
			k.SetGroupVersionKind(schema.GroupVersionKind{})
		}
		return nil
	})
}

// itemsLoseKinds reports whether list's items are written without kind
// and apiVersion: a list of built-in kinds.
func itemsLoseKinds(list runtime.Object) bool {
	switch list.(type) {
	case runtime.Unstructured, *metav1.PartialObjectMetadataList:
		return false
	}
	return meta.IsListType(list)
}
