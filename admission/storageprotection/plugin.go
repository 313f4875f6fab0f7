// Package storageprotection is kube's StorageObjectInUseProtection plugin:
// every new PersistentVolume, PersistentVolumeClaim and
// VolumeAttributesClass gets the protection finalizer, which the
// pv-protection, pvc-protection and volumeattributesclass-protection loops
// remove once nothing uses the object, so that a claim a running pod
// mounts, a bound volume, or a class a claim or volume names, is not
// removed under it.
package storageprotection

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
)

// The finalizers, kube's.
const (
	PVCFinalizer = "kubernetes.io/pvc-protection"
	PVFinalizer  = "kubernetes.io/pv-protection"
	VACFinalizer = "kubernetes.io/vac-protection"
)

// Plugin is the StorageObjectInUseProtection plugin.
type Plugin struct{}

var (
	_ admission.Mutator = Plugin{}
	_ admission.Handles = Plugin{}
)

// finalizers maps the protected resources to their finalizer.
var finalizers = map[schema.GroupResource]string{
	{Resource: "persistentvolumes"}:                                PVFinalizer,
	{Resource: "persistentvolumeclaims"}:                           PVCFinalizer,
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: VACFinalizer,
}

// Handles creates.
func (Plugin) Handles(op admission.Operation) bool { return op == admission.Create }

// Admit adds the resource's protection finalizer, once.
func (Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	f, ok := finalizers[a.Resource.GroupResource()]
	if !ok || a.Subresource != "" {
		return nil
	}
	switch a.Object.(type) {
	case *corev1.PersistentVolume, *corev1.PersistentVolumeClaim, *storagev1.VolumeAttributesClass:
	default:
		return nil
	}
	m, err := meta.Accessor(a.Object)
	if err != nil || slices.Contains(m.GetFinalizers(), f) {
		return nil
	}
	m.SetFinalizers(append(m.GetFinalizers(), f))
	return nil
}
