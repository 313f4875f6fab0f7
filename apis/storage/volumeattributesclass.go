package storage

import (
	"context"
	"reflect"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// VolumeAttributesClassStrategy is the strategy of the cluster-scoped
// volumeattributesclasses resource: a CSI driver's name and the parameters
// a volume of the class is modified with, both fixed once created.
type VolumeAttributesClassStrategy struct{}

var _ registry.Strategy = VolumeAttributesClassStrategy{}

// NamespaceScoped is false.
func (VolumeAttributesClassStrategy) NamespaceScoped() bool { return false }

// PrepareForCreate does nothing: a class has no status.
func (VolumeAttributesClassStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: a class has no status.
func (VolumeAttributesClassStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {
}

// Validate validates a new class.
func (VolumeAttributesClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateVolumeAttributesClass(obj.(*storagev1.VolumeAttributesClass))
}

// ValidateUpdate refuses a change of driver or parameters, with kube's
// messages, then validates the class.
func (VolumeAttributesClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	vac, oldVAC := obj.(*storagev1.VolumeAttributesClass), old.(*storagev1.VolumeAttributesClass)
	var errs field.ErrorList
	if vac.DriverName != oldVAC.DriverName {
		errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
	}
	if !reflect.DeepEqual(vac.Parameters, oldVAC.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return append(errs, validateVolumeAttributesClass(vac)...)
}

// validateVolumeAttributesClass requires a driver name, as a storage
// class's provisioner, and at least one parameter.
func validateVolumeAttributesClass(vac *storagev1.VolumeAttributesClass) field.ErrorList {
	errs := validateProvisioner(vac.DriverName, field.NewPath("driverName"))
	params := field.NewPath("parameters")
	errs = append(errs, validateParameters(vac.Parameters, params)...)
	if len(vac.Parameters) == 0 {
		errs = append(errs, field.Required(params, "must contain at least one key/value pair"))
	}
	return errs
}
