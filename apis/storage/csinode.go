package storage

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// maxNodeIDLength is kube's bound on a driver's node ID.
const maxNodeIDLength = 256

// CSINodeStrategy is the strategy of the cluster-scoped csinodes resource.
// Its status (storage health) belongs to the CSIVolumeHealth gate, off in
// 1.37: a status kube would drop is dropped.
type CSINodeStrategy struct{}

var (
	_ registry.Strategy             = CSINodeStrategy{}
	_ registry.UnconditionalUpdater = CSINodeStrategy{}
)

// NamespaceScoped is false.
func (CSINodeStrategy) NamespaceScoped() bool { return false }

// AllowUnconditionalUpdate is false, as in kube.
func (CSINodeStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate clears the status.
func (CSINodeStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*storagev1.CSINode).Status = storagev1.CSINodeStatus{}
}

// PrepareForUpdate keeps the status.
func (CSINodeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*storagev1.CSINode).Status = old.(*storagev1.CSINode).Status
}

// Validate validates a new CSI node.
func (CSINodeStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateCSINodeDrivers(obj.(*storagev1.CSINode).Spec.Drivers, field.NewPath("spec", "drivers"))
}

// ValidateUpdate validates an update: a driver present before and after
// may change its allocatable count only.
func (CSINodeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	n, oldN := obj.(*storagev1.CSINode), old.(*storagev1.CSINode)
	errs := validateCSINodeDrivers(n.Spec.Drivers, field.NewPath("spec", "drivers"))
	for _, o := range oldN.Spec.Drivers {
		for _, d := range n.Spec.Drivers {
			if o.Name != d.Name {
				continue
			}
			d, o := d.DeepCopy(), o.DeepCopy()
			d.Allocatable, o.Allocatable = nil, nil
			errs = append(errs, apivalidation.ValidateImmutableField(d, o, field.NewPath("spec", "drivers"))...)
		}
	}
	return errs
}

// CSINodeStatusStrategy is the strategy of csinodes/status.
type CSINodeStatusStrategy struct{ CSINodeStrategy }

// PrepareForUpdate keeps the spec and the metadata of old, and the storage
// health only if old had some (the gate is off).
func (CSINodeStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, oldN := obj.(*storagev1.CSINode), old.(*storagev1.CSINode)
	n.Spec = oldN.Spec
	metav1.ResetObjectMetaForStatus(&n.ObjectMeta, &oldN.ObjectMeta)
	if len(oldN.Status.StorageHealth) == 0 {
		n.Status.StorageHealth = nil
	}
}

// ValidateUpdate validates the storage health entries.
func (CSINodeStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	var errs field.ErrorList
	fldPath := field.NewPath("status", "storageHealth")
	seen := sets.New[string]()
	for i, h := range obj.(*storagev1.CSINode).Status.StorageHealth {
		if seen.Has(h.Name) {
			errs = append(errs, field.Duplicate(fldPath.Index(i), h.Name))
		}
		seen.Insert(h.Name)
		errs = append(errs, validateStorageHealth(h, fldPath.Index(i))...)
	}
	return errs
}

func validateCSINodeDrivers(drivers []storagev1.CSINodeDriver, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, d := range drivers {
		p := fldPath.Index(i)
		errs = append(errs, core.ValidateCSIDriverName(d.Name, p.Child("name"))...)
		switch {
		case d.NodeID == "":
			errs = append(errs, field.Required(p.Child("nodeID"), d.NodeID))
		case len(d.NodeID) > maxNodeIDLength:
			errs = append(errs, field.Invalid(p.Child("nodeID"), d.NodeID, fmt.Sprintf("must be %d characters or less", maxNodeIDLength)))
		}
		if a := d.Allocatable; a != nil && a.Count != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*a.Count), p.Child("allocatable", "count"))...)
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), d.Name))
		}
		names.Insert(d.Name)
		errs = append(errs, validateTopologyKeys(d.TopologyKeys, p)...)
	}
	return errs
}

// validateTopologyKeys: set, distinct, qualified names. kube reports them at
// the driver's path.
func validateTopologyKeys(keys []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for _, k := range keys {
		if k == "" {
			errs = append(errs, field.Required(fldPath, k))
		}
		if seen.Has(k) {
			errs = append(errs, field.Duplicate(fldPath, k))
		}
		seen.Insert(k)
		errs = append(errs, qualifiedName(k, fldPath)...)
	}
	return errs
}

var (
	healthStatuses    = []string{string(storagev1.StorageDegraded), string(storagev1.StorageUnreachable)}
	healthAccessModes = []string{string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany), string(corev1.ReadWriteOnce), string(corev1.ReadWriteOncePod)}
	healthVolumeModes = []string{string(corev1.PersistentVolumeFilesystem), string(corev1.PersistentVolumeBlock)}
)

const maxHealthConditions = 16

func validateStorageHealth(h storagev1.StorageHealth, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	} else {
		errs = append(errs, core.ValidateCSIDriverName(h.Name, fldPath.Child("name"))...)
	}
	condPath := fldPath.Child("healthConditions")
	if len(h.HealthConditions) > maxHealthConditions {
		return append(errs, field.TooMany(condPath, len(h.HealthConditions), maxHealthConditions))
	}
	for i, c := range h.HealthConditions {
		p := condPath.Index(i)
		if !slices.Contains(healthStatuses, string(c.Status)) {
			errs = append(errs, field.NotSupported(p.Child("status"), c.Status, healthStatuses))
		}
		if c.Reason == "" {
			errs = append(errs, field.Required(p.Child("reason"), ""))
		} else {
			for _, msg := range metav1validation.IsValidConditionReason(c.Reason) {
				errs = append(errs, field.Invalid(p.Child("reason"), c.Reason, msg))
			}
			if len(c.Reason) > 256 {
				errs = append(errs, field.TooLong(p.Child("reason"), c.Reason, 256))
			}
		}
		if len(c.Message) > 1024 {
			errs = append(errs, field.TooLong(p.Child("message"), c.Message, 1024))
		}
		if m := c.AccessMode; m != nil && !slices.Contains(healthAccessModes, string(*m)) {
			errs = append(errs, field.NotSupported(p.Child("accessMode"), *m, healthAccessModes))
		}
		if m := c.VolumeMode; m != nil && !slices.Contains(healthVolumeModes, string(*m)) {
			errs = append(errs, field.NotSupported(p.Child("volumeMode"), *m, healthVolumeModes))
		}
	}
	return errs
}
