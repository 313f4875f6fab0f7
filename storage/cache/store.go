package cache

import (
	"fmt"
	"strings"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// btreeDegree is the degree of the state's B-tree. A snapshot of the
// history clones the tree (lazily) and the next change copies the nodes on
// one path, so the degree trades the memory of a snapshot (about depth x
// node size) against the depth of lookups.
const btreeDegree = 8

// tree is the state of every object of the resource, ordered by key.
type tree = btree.BTreeG[*element]

func newTree() *tree {
	return btree.NewG(btreeDegree, func(a, b *element) bool { return a.key < b.key })
}

// get returns the element at key.
func get(t *tree, key string) (*element, bool) {
	return t.Get(&element{key: key})
}

// ascendPrefix calls f on the elements whose key starts with prefix, from
// the first key >= start, in order, until f returns false.
func ascendPrefix(t *tree, prefix, start string, f func(*element) bool) {
	if start < prefix {
		start = prefix
	}
	t.AscendGreaterOrEqual(&element{key: start}, func(e *element) bool {
		return strings.HasPrefix(e.key, prefix) && f(e)
	})
}

// KeyFunc returns the storage key of an object.
type KeyFunc func(obj runtime.Object) (string, error)

// NamespacedKeyFunc returns the KeyFunc of the registry's layout:
// resourcePrefix/namespace/name, or resourcePrefix/name for an object
// without a namespace.
func NamespacedKeyFunc(resourcePrefix string) KeyFunc {
	resourcePrefix = strings.TrimSuffix(resourcePrefix, "/")
	return func(obj runtime.Object) (string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return "", fmt.Errorf("computing the key: %w", err)
		}
		if m.GetName() == "" {
			return "", fmt.Errorf("computing the key of a %T: no name", obj)
		}
		if ns := m.GetNamespace(); ns != "" {
			return resourcePrefix + "/" + ns + "/" + m.GetName(), nil
		}
		return resourcePrefix + "/" + m.GetName(), nil
	}
}

// objectRV returns the resourceVersion of obj.
func objectRV(obj runtime.Object) (uint64, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, fmt.Errorf("reading resourceVersion: %w", err)
	}
	rv, err := storage.ParseResourceVersion(m.GetResourceVersion())
	if err == nil && rv == 0 {
		err = fmt.Errorf("%T %s has no resourceVersion", obj, m.GetName())
	}
	return rv, err
}

// copyWithRV returns a deep copy of obj with its resourceVersion set to rv.
func copyWithRV(obj runtime.Object, rv uint64) (runtime.Object, error) {
	out := obj.DeepCopyObject()
	m, err := meta.Accessor(out)
	if err != nil {
		return nil, fmt.Errorf("setting resourceVersion: %w", err)
	}
	m.SetResourceVersion(formatRV(rv))
	return out, nil
}
