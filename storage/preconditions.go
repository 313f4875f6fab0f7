package storage

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Check reports whether p (nil: none) holds for obj, the object at key,
// with kube's messages: a uid that differs is ErrPrecondition, a
// resourceVersion ErrConflict.
func (p *Preconditions) Check(key string, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("checking preconditions of %q: %w", key, err)
	}
	if p.UID != nil && *p.UID != m.GetUID() {
		return NewError(ErrPrecondition, key, 0, fmt.Sprintf(
			"Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, types.UID(m.GetUID())))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return NewError(ErrConflict, key, 0, fmt.Sprintf(
			"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
			*p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}
