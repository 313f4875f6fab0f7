package core

import (
	"fmt"
	"path"

	"github.com/capstan-io/capstan/apis/internaldiff"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	reclaimPolicies = []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRecycle),
		string(corev1.PersistentVolumeReclaimRetain)}
	volumeModes = []string{string(corev1.PersistentVolumeBlock), string(corev1.PersistentVolumeFilesystem)}
)

// ValidatePersistentVolume validates a volume's spec and the mount options
// annotation, which only some sources support.
func ValidatePersistentVolume(pv *corev1.PersistentVolume) field.ErrorList {
	errs := validatePersistentVolumeSpec(&pv.Spec, field.NewPath("spec"))
	return append(errs, validateMountOptionAnnotation(pv)...)
}

// ValidatePersistentVolumeUpdate adds to ValidatePersistentVolume the
// immutability of the source (bar a new controller expand secret) and of
// the volume mode. As in kube, the mode's error names "volumeMode".
func ValidatePersistentVolumeUpdate(pv, old *corev1.PersistentVolume) field.ErrorList {
	errs := ValidatePersistentVolume(pv)
	src := pv.Spec.PersistentVolumeSource
	if old.Spec.CSI != nil && old.Spec.CSI.ControllerExpandSecretRef == nil && src.CSI != nil && src.CSI.ControllerExpandSecretRef != nil {
		csi := *src.CSI
		csi.ControllerExpandSecretRef = nil
		src.CSI = &csi
	}
	if !equality.Semantic.DeepEqual(src, old.Spec.PersistentVolumeSource) {
		errs = append(errs, immutableDiff(field.NewPath("spec", "persistentvolumesource"),
			"spec.persistentvolumesource is immutable after creation", old.Spec.PersistentVolumeSource, src))
	}
	errs = append(errs, apivalidation.ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.VolumeAttributesClassName != nil && pv.Spec.VolumeAttributesClassName == nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
	}
	return errs
}

func validatePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	errs := validateAccessModes(spec.AccessModes, fldPath.Child("accessModes"), "")
	errs = append(errs, validateVolumeCapacity(spec.Capacity, fldPath.Child("capacity"))...)
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && !sets.New(reclaimPolicies...).Has(string(p)) {
		errs = append(errs, field.NotSupported(fldPath.Child("persistentVolumeReclaimPolicy"), p, reclaimPolicies))
	}
	hasAffinity := spec.NodeAffinity != nil
	if hasAffinity {
		errs = append(errs, validateVolumeNodeAffinity(spec.NodeAffinity, fldPath.Child("nodeAffinity"))...)
	}
	errs = append(errs, validatePersistentVolumeSource(&spec.PersistentVolumeSource, hasAffinity, fldPath)...)
	if h := spec.HostPath; h != nil && path.Clean(h.Path) == "/" && spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(fldPath.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	errs = append(errs, validateSubdomainName(spec.StorageClassName, fldPath.Child("storageClassName"))...)
	if m := spec.VolumeMode; m != nil && !sets.New(volumeModes...).Has(string(*m)) {
		errs = append(errs, field.NotSupported(fldPath.Child("volumeMode"), *m, volumeModes))
	}
	if vac := spec.VolumeAttributesClassName; vac != nil {
		if *vac == "" {
			errs = append(errs, field.Required(fldPath.Child("volumeAttributesClassName"), "an empty string is disallowed"))
		} else {
			errs = append(errs, validateSubdomainName(*vac, fldPath.Child("volumeAttributesClassName"))...)
		}
		if spec.CSI == nil {
			errs = append(errs, field.Required(fldPath.Child("csi"), "has to be specified when using volumeAttributesClassName"))
		}
	}
	return errs
}

// validateAccessModes requires at least one known access mode, and
// ReadWriteOncePod alone. required is the detail of a missing list.
func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, fldPath *field.Path, required string) field.ErrorList {
	var errs field.ErrorList
	if len(modes) == 0 {
		errs = append(errs, field.Required(fldPath, required))
	}
	rwop, other := false, false
	for _, mode := range modes {
		switch {
		case mode == corev1.ReadWriteOncePod:
			rwop = true
		case sets.New(pvcAccessModes...).Has(string(mode)):
			other = true
		default:
			errs = append(errs, field.NotSupported(fldPath, mode, pvcAccessModes))
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(fldPath, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

// validateVolumeCapacity requires a storage capacity, positive, and nothing
// else.
func validateVolumeCapacity(capacity corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(capacity) == 0 {
		errs = append(errs, field.Required(fldPath, ""))
	}
	if _, ok := capacity[corev1.ResourceStorage]; !ok || len(capacity) > 1 {
		errs = append(errs, field.NotSupported(fldPath, capacity, []string{string(corev1.ResourceStorage)}))
	}
	for name, q := range capacity {
		path := fldPath.Key(string(name))
		if q.Value() < 0 {
			errs = append(errs, field.Invalid(path, q.Value(), "must be a valid resource quantity"))
		}
		errs = append(errs, validatePositiveQuantity(q, path)...)
	}
	return errs
}

// validateMountOptionAnnotation refuses mount options on a volume whose
// source cannot take them.
func validateMountOptionAnnotation(pv *corev1.PersistentVolume) field.ErrorList {
	s := pv.Spec.PersistentVolumeSource
	if s.GCEPersistentDisk != nil || s.AWSElasticBlockStore != nil || s.Glusterfs != nil || s.NFS != nil || s.RBD != nil ||
		s.Quobyte != nil || s.ISCSI != nil || s.Cinder != nil || s.CephFS != nil || s.AzureFile != nil ||
		s.VsphereVolume != nil || s.AzureDisk != nil || s.PhotonPersistentDisk != nil {
		return nil
	}
	if _, ok := pv.Annotations[corev1.MountOptionAnnotation]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath("metadata").Child("annotations", corev1.MountOptionAnnotation),
			"may not specify mount options for this volume type")}
	}
	return nil
}

// validateVolumeNodeAffinity requires the required node selector.
func validateVolumeNodeAffinity(a *corev1.VolumeNodeAffinity, fldPath *field.Path) field.ErrorList {
	if a.Required == nil {
		return field.ErrorList{field.Required(fldPath.Child("required"), "must specify required node constraints")}
	}
	return validateNodeSelector(a.Required, fldPath.Child("required"))
}

// validatePVSecretReference requires the name and namespace of a secret.
func validatePVSecretReference(ref *corev1.SecretReference, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	} else {
		errs = append(errs, validateDNSSubdomain(ref.Name, fldPath.Child("name"))...)
	}
	if ref.Namespace == "" {
		errs = append(errs, field.Required(fldPath.Child("namespace"), ""))
	} else {
		errs = append(errs, validateDNSLabel(ref.Namespace, fldPath.Child("namespace"))...)
	}
	return errs
}

func validateCSIPersistentVolume(csi *corev1.CSIPersistentVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateCSIDriverName(csi.Driver, fldPath.Child("driver"))
	if csi.VolumeHandle == "" {
		errs = append(errs, field.Required(fldPath.Child("volumeHandle"), ""))
	}
	refs := []struct {
		name string
		ref  *corev1.SecretReference
	}{
		{"controllerPublishSecretRef", csi.ControllerPublishSecretRef}, {"controllerExpandSecretRef", csi.ControllerExpandSecretRef},
		{"nodePublishSecretRef", csi.NodePublishSecretRef}, {"nodeExpandSecretRef", csi.NodeExpandSecretRef},
	}
	for _, r := range refs {
		if r.ref != nil {
			errs = append(errs, validatePVSecretReference(r.ref, fldPath.Child(r.name))...)
		}
	}
	return errs
}

func validateLocalVolume(l *corev1.LocalVolumeSource, hasAffinity bool, fldPath, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if l.Path == "" {
		errs = append(errs, field.Required(fldPath.Child("path"), ""))
	} else {
		errs = append(errs, validatePathNoBacksteps(l.Path, fldPath.Child("path"))...)
	}
	if !hasAffinity {
		errs = append(errs, field.Required(specPath.Child("nodeAffinity"), "Local volume requires node affinity"))
	}
	return errs
}

// immutableDiff is kube's Forbidden error of a changed immutable struct:
// the message, then the difference.
func immutableDiff(fldPath *field.Path, msg string, old, new any) *field.Error {
	return field.Forbidden(fldPath, fmt.Sprintf("%s\n%v", msg, internaldiff.Diff(old, new)))
}
