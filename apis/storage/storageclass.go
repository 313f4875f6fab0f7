// Package storage holds the strategies of storage.k8s.io/v1: storage
// classes, CSI drivers and nodes, CSI storage capacities and volume
// attachments.
package storage

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// StorageClassStrategy is the strategy of the cluster-scoped
// storageclasses resource.
type StorageClassStrategy struct{}

var (
	_ registry.Strategy         = StorageClassStrategy{}
	_ registry.Defaulter        = StorageClassStrategy{}
	_ registry.WarningsOnCreate = StorageClassStrategy{}
	_ registry.WarningsOnUpdate = StorageClassStrategy{}
)

// NamespaceScoped is false.
func (StorageClassStrategy) NamespaceScoped() bool { return false }

// Default sets the Delete reclaim policy and Immediate binding.
func (StorageClassStrategy) Default(obj runtime.Object) {
	sc := obj.(*storagev1.StorageClass)
	if sc.ReclaimPolicy == nil {
		p := corev1.PersistentVolumeReclaimDelete
		sc.ReclaimPolicy = &p
	}
	if sc.VolumeBindingMode == nil {
		m := storagev1.VolumeBindingImmediate
		sc.VolumeBindingMode = &m
	}
}

// PrepareForCreate does nothing: a class has no status.
func (StorageClassStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing.
func (StorageClassStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new class.
func (StorageClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateStorageClass(obj.(*storagev1.StorageClass))
}

// ValidateUpdate validates an update: the rules of a new class, and all of
// provisioner, parameters, reclaim policy and binding mode immutable.
func (StorageClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	sc, oldSC := obj.(*storagev1.StorageClass), old.(*storagev1.StorageClass)
	errs := ValidateStorageClass(sc)
	errs = append(errs, apivalidation.ValidateImmutableField(sc.Parameters, oldSC.Parameters, field.NewPath("parameters"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(sc.Provisioner, oldSC.Provisioner, field.NewPath("provisioner"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(sc.ReclaimPolicy, oldSC.ReclaimPolicy, field.NewPath("reclaimPolicy"))...)
	return append(errs, apivalidation.ValidateImmutableField(sc.VolumeBindingMode, oldSC.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
}

// WarningsOnCreate warns about deprecated node labels in the allowed
// topologies.
func (StorageClassStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return storageClassWarnings(obj.(*storagev1.StorageClass))
}

// WarningsOnUpdate is WarningsOnCreate.
func (StorageClassStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return storageClassWarnings(obj.(*storagev1.StorageClass))
}
