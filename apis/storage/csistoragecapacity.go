package storage

import (
	"context"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// CSIStorageCapacityStrategy is the strategy of the namespaced
// csistoragecapacities resource.
type CSIStorageCapacityStrategy struct{}

var (
	_ registry.Strategy             = CSIStorageCapacityStrategy{}
	_ registry.UnconditionalUpdater = CSIStorageCapacityStrategy{}
	_ registry.WarningsOnCreate     = CSIStorageCapacityStrategy{}
	_ registry.WarningsOnUpdate     = CSIStorageCapacityStrategy{}
)

// NamespaceScoped is true.
func (CSIStorageCapacityStrategy) NamespaceScoped() bool { return true }

// AllowUnconditionalUpdate is false, as in kube.
func (CSIStorageCapacityStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate does nothing.
func (CSIStorageCapacityStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing.
func (CSIStorageCapacityStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new capacity.
func (CSIStorageCapacityStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateCSIStorageCapacity(obj.(*storagev1.CSIStorageCapacity), false)
}

// ValidateUpdate validates an update: the node topology and the class are
// the inputs of the capacity and immutable.
func (CSIStorageCapacityStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*storagev1.CSIStorageCapacity), old.(*storagev1.CSIStorageCapacity)
	errs := validateCSIStorageCapacity(c, len(validateTopology(oldC.NodeTopology, false)) > 0)
	if !apiequality.Semantic.DeepEqual(c.NodeTopology, oldC.NodeTopology) {
		errs = append(errs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, "field is immutable"))
	}
	if c.StorageClassName != oldC.StorageClassName {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, "field is immutable"))
	}
	return errs
}

// WarningsOnCreate warns about deprecated node labels in the topology.
func (CSIStorageCapacityStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return selectorWarnings(obj.(*storagev1.CSIStorageCapacity).NodeTopology, field.NewPath("nodeTopology"))
}

// WarningsOnUpdate is WarningsOnCreate.
func (CSIStorageCapacityStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return selectorWarnings(obj.(*storagev1.CSIStorageCapacity).NodeTopology, field.NewPath("nodeTopology"))
}

func validateTopology(sel *metav1.LabelSelector, allowInvalidLabelValue bool) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	return metav1validation.ValidateLabelSelector(sel, opts, field.NewPath("nodeTopology"))
}

// validateCSIStorageCapacity: a valid node topology, a class name and a
// non-negative capacity.
func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity, allowInvalidLabelValue bool) field.ErrorList {
	errs := validateTopology(c.NodeTopology, allowInvalidLabelValue)
	for _, msg := range apivalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	if q := c.Capacity; q != nil && q.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), q.String(), apivalidation.IsNegativeErrorMsg))
	}
	return errs
}
