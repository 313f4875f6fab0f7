package core

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// claimResizeStatuses are the values of status.allocatedResourceStatuses.
var claimResizeStatuses = []string{string(corev1.PersistentVolumeClaimControllerResizeInProgress),
	string(corev1.PersistentVolumeClaimControllerResizeInfeasible), string(corev1.PersistentVolumeClaimNodeResizeInProgress),
	string(corev1.PersistentVolumeClaimNodeResizeInfeasible), string(corev1.PersistentVolumeClaimNodeResizePending)}

// ValidatePersistentVolumeClaim validates a claim's spec.
func ValidatePersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) field.ErrorList {
	return validateClaimSpec(&pvc.Spec, field.NewPath("spec"))
}

// validateClaimSpec adds the data sources and the volume attributes class
// to the checks claim templates share.
func validateClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	errs := validatePVCSpec(spec, fldPath)
	if ds := spec.DataSource; ds != nil {
		errs = append(errs, validateDataSource(ds.Name, ds.Kind, ds.APIGroup, fldPath.Child("dataSource"))...)
	}
	if ref := spec.DataSourceRef; ref != nil {
		path := fldPath.Child("dataSourceRef")
		errs = append(errs, validateDataSource(ref.Name, ref.Kind, ref.APIGroup, path)...)
		if ref.Namespace != nil && *ref.Namespace != "" {
			for _, msg := range apivalidation.ValidateNamespaceName(*ref.Namespace, false) {
				errs = append(errs, field.Invalid(path.Child("namespace"), *ref.Namespace, msg))
			}
		}
	}
	ds, ref := spec.DataSource, spec.DataSourceRef
	switch {
	case ref != nil && ref.Namespace != nil && *ref.Namespace != "":
		if ds != nil {
			errs = append(errs, field.Invalid(fldPath, fldPath.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	case ds != nil && ref != nil:
		if !reflect.DeepEqual(ds.APIGroup, ref.APIGroup) || ds.Kind != ref.Kind || ds.Name != ref.Name {
			errs = append(errs, field.Invalid(fldPath, fldPath.Child("dataSource"), "must match dataSourceRef"))
		}
	}
	if vac := spec.VolumeAttributesClassName; vac != nil && *vac != "" {
		errs = append(errs, validateSubdomainName(*vac, fldPath.Child("volumeAttributesClassName"))...)
	}
	return errs
}

// validateDataSource requires a name and kind, a claim in the core group,
// and a DNS subdomain group.
func validateDataSource(name, kind string, apiGroup *string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	}
	if kind == "" {
		errs = append(errs, field.Required(fldPath.Child("kind"), ""))
	}
	group := ""
	if apiGroup != nil {
		group = *apiGroup
	}
	if group == "" && kind != "PersistentVolumeClaim" {
		errs = append(errs, field.Invalid(fldPath, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	if group != "" {
		errs = append(errs, validateDNSSubdomain(group, fldPath.Child("apiGroup"))...)
	}
	return errs
}

// ValidatePersistentVolumeClaimUpdate validates an update of a claim. Its
// spec is immutable but for the volume name, set once on binding, the
// storage class, set once if missing, and, once bound, the storage request
// and volume attributes class. A request may shrink back no lower than the
// capacity, to recover from a failed expansion.
func ValidatePersistentVolumeClaimUpdate(pvc, old *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := ValidatePersistentVolumeClaim(pvc)
	spec, oldSpec := pvc.Spec.DeepCopy(), old.Spec.DeepCopy()
	if old.Spec.VolumeName == "" {
		oldSpec.VolumeName = spec.VolumeName
	}
	errs = append(errs, allowStorageClassUpgrade(pvc, old, spec)...)
	if pvc.Status.Phase == corev1.ClaimBound {
		if spec.Resources.Requests != nil {
			spec.Resources.Requests[corev1.ResourceStorage] = old.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		spec.VolumeAttributesClassName = oldSpec.VolumeAttributesClassName
	}
	if !equality.Semantic.DeepEqual(spec, oldSpec) {
		errs = append(errs, immutableDiff(field.NewPath("spec"),
			"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims", *oldSpec, *spec))
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) < 0 && newSize.Cmp(old.Status.Capacity[corev1.ResourceStorage]) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(pvc.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	vacPath := field.NewPath("spec", "volumeAttributesClassName")
	if vac := pvc.Spec.VolumeAttributesClassName; !equality.Semantic.DeepEqual(vac, old.Spec.VolumeAttributesClassName) &&
		old.Status.CurrentVolumeAttributesClassName != nil {
		if vac == nil {
			errs = append(errs, field.Forbidden(vacPath, "update to nil is forbidden when status.currentVolumeAttributesClassName is not nil"))
		} else if *vac == "" {
			errs = append(errs, field.Forbidden(vacPath, "update to empty string is forbidden when status.currentVolumeAttributesClassName is not nil"))
		}
	}
	return errs
}

// allowStorageClassUpgrade lets a claim whose class was given by the beta
// annotation, or not at all, set storageClassName once, by making spec (the
// new spec's copy) agree with the old. It checks that the annotation is
// otherwise immutable.
func allowStorageClassUpgrade(pvc, old *corev1.PersistentVolumeClaim, spec *corev1.PersistentVolumeClaimSpec) field.ErrorList {
	key := corev1.BetaStorageClassAnnotation
	oldClass, oldAnnotated := old.Annotations[key]
	newClass, newAnnotated := pvc.Annotations[key]
	name, oldName := pvc.Spec.StorageClassName, old.Spec.StorageClassName
	if oldAnnotated && oldName == nil && name != nil && *name == oldClass && (!newAnnotated || newClass == oldClass) {
		// The class moves from the annotation to the field.
		spec.StorageClassName = nil
		return nil
	}
	var errs field.ErrorList
	if newClass != oldClass {
		errs = append(errs, field.Invalid(field.NewPath("metadata").Child("annotations", key), newClass, apivalidation.FieldImmutableErrorMsg))
	}
	if name != nil && oldName == nil && (!oldAnnotated || *name == oldClass) {
		spec.StorageClassName = nil
	}
	return errs
}

// ValidatePersistentVolumeClaimStatusUpdate validates a status update: the
// capacity and the resources being resized.
func ValidatePersistentVolumeClaimStatusUpdate(pvc, _ *corev1.PersistentVolumeClaim) field.ErrorList {
	var errs field.ErrorList
	if len(pvc.Spec.AccessModes) == 0 {
		// kube spells the path this way.
		errs = append(errs, field.Required(field.NewPath("Spec", "accessModes"), ""))
	}
	capPath := field.NewPath("status", "capacity")
	for name, q := range pvc.Status.Capacity {
		if q.Value() < 0 {
			errs = append(errs, field.Invalid(capPath.Key(string(name)), q.Value(), "must be a valid resource quantity"))
		}
	}
	statusPath := field.NewPath("status", "allocatedResourceStatuses")
	for name, s := range pvc.Status.AllocatedResourceStatuses {
		errs = append(errs, validateClaimResourceKey(string(name), statusPath)...)
		if !sets.New(claimResizeStatuses...).Has(string(s)) {
			errs = append(errs, field.NotSupported(statusPath, name, claimResizeStatuses))
		}
	}
	allocPath := field.NewPath("status", "allocatedResources")
	for name, q := range pvc.Status.AllocatedResources {
		if e := validateClaimResourceKey(string(name), allocPath); len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		path := allocPath.Key(string(name))
		if q.Value() < 0 {
			errs = append(errs, field.Invalid(path, q.Value(), "must be a valid resource quantity"))
		} else {
			errs = append(errs, validateResourceQuantityValue(corev1.ResourceStorage, q, path)...)
		}
	}
	return errs
}

// validateClaimResourceKey: a qualified name, and storage if native.
func validateClaimResourceKey(name string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(fldPath, name, msg))
	}
	if len(errs) == 0 && isNativeResource(corev1.ResourceName(name)) && name != string(corev1.ResourceStorage) {
		errs = append(errs, field.NotSupported(fldPath, name, []string{string(corev1.ResourceStorage)}))
	}
	return errs
}
