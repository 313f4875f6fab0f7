package apps

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The claim rules below are kube's persistent volume claim spec validation
// on create, which stateful sets apply to their claim templates.

var (
	claimAccessModes = []corev1.PersistentVolumeAccessMode{
		corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod,
	}
	claimVolumeModes = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}
)

// validateClaimSpec validates the spec of a claim template.
func validateClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	errs := validateAccessModes(spec.AccessModes, fldPath.Child("accessModes"))
	if spec.Selector != nil {
		opts := metav1validation.LabelSelectorValidationOptions{}
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, opts, fldPath.Child("selector"))...)
	}
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storagePath, ""))
	} else if q.Cmp(resource.Quantity{}) <= 0 {
		errs = append(errs, field.Invalid(storagePath, q.String(), "must be greater than zero"))
	}
	errs = append(errs, validateClassName(spec.StorageClassName, fldPath.Child("storageClassName"))...)
	if spec.VolumeMode != nil && !slices.Contains(claimVolumeModes, *spec.VolumeMode) {
		errs = append(errs, field.NotSupported(fldPath.Child("volumeMode"), *spec.VolumeMode, claimVolumeModes))
	}
	errs = append(errs, validateDataSources(spec, fldPath)...)
	return append(errs, validateClassName(spec.VolumeAttributesClassName, fldPath.Child("volumeAttributesClassName"))...)
}

func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(modes) == 0 {
		errs = append(errs, field.Required(fldPath, "at least 1 access mode is required"))
	}
	oncePod, others := false, false
	for _, m := range modes {
		switch {
		case !slices.Contains(claimAccessModes, m):
			errs = append(errs, field.NotSupported(fldPath, m, claimAccessModes))
		case m == corev1.ReadWriteOncePod:
			oncePod = true
		default:
			others = true
		}
	}
	if oncePod && others {
		errs = append(errs, field.Forbidden(fldPath, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// validateClassName validates a storage or volume attributes class name.
func validateClassName(name *string, fldPath *field.Path) field.ErrorList {
	if name == nil || *name == "" {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(*name, false) {
		errs = append(errs, field.Invalid(fldPath, *name, msg))
	}
	return errs
}

func validateDataSources(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ds := spec.DataSource; ds != nil {
		errs = append(errs, validateDataSourceRef(ds.APIGroup, ds.Kind, ds.Name, fldPath.Child("dataSource"))...)
	}
	ref := spec.DataSourceRef
	if ref == nil {
		return errs
	}
	refPath := fldPath.Child("dataSourceRef")
	errs = append(errs, validateDataSourceRef(ref.APIGroup, ref.Kind, ref.Name, refPath)...)
	if ref.Namespace != nil && *ref.Namespace != "" {
		for _, msg := range apivalidation.NameIsDNSLabel(*ref.Namespace, false) {
			errs = append(errs, field.Invalid(refPath.Child("namespace"), *ref.Namespace, msg))
		}
		if spec.DataSource != nil {
			errs = append(errs, field.Invalid(fldPath, fldPath.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	} else if ds := spec.DataSource; ds != nil {
		if !equalPtr(ds.APIGroup, ref.APIGroup) || ds.Kind != ref.Kind || ds.Name != ref.Name {
			errs = append(errs, field.Invalid(fldPath, fldPath.Child("dataSource"), "must match dataSourceRef"))
		}
	}
	return errs
}

func validateDataSourceRef(apiGroup *string, kind, name string, fldPath *field.Path) field.ErrorList {
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
		for _, msg := range validation.IsDNS1123Subdomain(group) {
			errs = append(errs, field.Invalid(fldPath.Child("apiGroup"), group, msg))
		}
	}
	return errs
}

func equalPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
