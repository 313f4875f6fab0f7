package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateContainerResourceName accepts the resources a container may
// request: cpu, memory, ephemeral-storage, hugepages or an extended resource.
// Other groups (autoscaling's container resource metrics) share the rule.
func ValidateContainerResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	return validateContainerResourceName(name, fldPath)
}

// ValidateInlinePersistentVolumeSpec validates the persistent volume spec a
// VolumeAttachment carries for a CSI volume inlined in a pod: a CSI source,
// access modes and no field that belongs to a real volume (claim, capacity,
// node affinity, class, a reclaim policy other than Retain, a mode other
// than Filesystem).
func ValidateInlinePersistentVolumeSpec(spec *corev1.PersistentVolumeSpec, fldPath *field.Path) field.ErrorList {
	const inline = "may not be specified in the context of inline volumes"
	var errs field.ErrorList
	if spec.ClaimRef != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("claimRef"), inline))
	}
	if len(spec.Capacity) != 0 {
		errs = append(errs, field.Forbidden(fldPath.Child("capacity"), inline))
	}
	if spec.CSI == nil {
		errs = append(errs, field.Required(fldPath.Child("csi"), "has to be specified in the context of inline volumes"))
	}
	errs = append(errs, validateAccessModes(spec.AccessModes, fldPath.Child("accessModes"), "")...)
	if p := spec.PersistentVolumeReclaimPolicy; p != "" && p != corev1.PersistentVolumeReclaimRetain {
		errs = append(errs, field.Forbidden(fldPath.Child("persistentVolumeReclaimPolicy"), "may only be Retain in the context of inline volumes"))
	}
	if spec.NodeAffinity != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("nodeAffinity"), inline))
	}
	errs = append(errs, validatePersistentVolumeSource(&spec.PersistentVolumeSource, false, fldPath)...)
	if spec.StorageClassName != "" {
		errs = append(errs, field.Forbidden(fldPath.Child("storageClassName"), inline))
	}
	if m := spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeFilesystem {
		errs = append(errs, field.Forbidden(fldPath.Child("volumeMode"), "may not specify volumeMode other than Filesystem in the context of inline volumes"))
	}
	return errs
}

// ValidateCSIDriverName validates the name of a CSI driver: required, at
// most 63 characters, a DNS subdomain once lower-cased.
func ValidateCSIDriverName(name string, fldPath *field.Path) field.ErrorList {
	return validateCSIDriverName(name, fldPath)
}

// ValidateNodeSelector validates a required node selector: at least one
// term, and valid requirements on labels and fields.
func ValidateNodeSelector(s *corev1.NodeSelector, fldPath *field.Path) field.ErrorList {
	return validateNodeSelector(s, fldPath)
}

// IsExtendedResourceName reports whether name is an extended resource: a
// qualified name outside the kubernetes.io domains, not prefixed
// "requests.".
func IsExtendedResourceName(name corev1.ResourceName) bool {
	return isExtendedResource(name)
}
