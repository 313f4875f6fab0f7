package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// volumeSourceKind is one of a volume's possible sources, in the order
// kube checks them.
type volumeSourceKind struct {
	name string // the field, as named in "may not specify more than 1 volume type"
	set  bool
	// shared is set for flexVolume, which kube counts without checking
	// that no other source came first.
	shared   bool
	validate func() field.ErrorList // nil when capstan checks only presence
}

// validatePersistentVolumeSource requires exactly one source and checks the
// common ones: hostPath, nfs, local and csi.
func validatePersistentVolumeSource(s *corev1.PersistentVolumeSource, hasAffinity bool, specPath *field.Path) field.ErrorList {
	kinds := []volumeSourceKind{
		{name: "hostPath", set: s.HostPath != nil, validate: func() field.ErrorList { return validateHostPath(s.HostPath, specPath.Child("hostPath")) }},
		{name: "gcePersistentDisk", set: s.GCEPersistentDisk != nil},
		{name: "awsElasticBlockStore", set: s.AWSElasticBlockStore != nil},
		{name: "glusterfs", set: s.Glusterfs != nil},
		{name: "flocker", set: s.Flocker != nil},
		{name: "nfs", set: s.NFS != nil, validate: func() field.ErrorList { return validateNFS(s.NFS, specPath.Child("nfs")) }},
		{name: "rbd", set: s.RBD != nil},
		{name: "quobyte", set: s.Quobyte != nil},
		{name: "cephFS", set: s.CephFS != nil},
		{name: "iscsi", set: s.ISCSI != nil},
		{name: "cinder", set: s.Cinder != nil},
		{name: "fc", set: s.FC != nil},
		{name: "flexVolume", set: s.FlexVolume != nil, shared: true},
		{name: "azureFile", set: s.AzureFile != nil},
		{name: "vsphereVolume", set: s.VsphereVolume != nil},
		{name: "photonPersistentDisk", set: s.PhotonPersistentDisk != nil},
		{name: "portworxVolume", set: s.PortworxVolume != nil},
		{name: "azureDisk", set: s.AzureDisk != nil},
		{name: "scaleIO", set: s.ScaleIO != nil},
		{name: "local", set: s.Local != nil, validate: func() field.ErrorList {
			return validateLocalVolume(s.Local, hasAffinity, specPath.Child("local"), specPath)
		}},
		{name: "storageos", set: s.StorageOS != nil},
		{name: "csi", set: s.CSI != nil, validate: func() field.ErrorList { return validateCSIPersistentVolume(s.CSI, specPath.Child("csi")) }},
	}
	var errs field.ErrorList
	n := 0
	for _, k := range kinds {
		if !k.set {
			continue
		}
		if n > 0 && !k.shared {
			errs = append(errs, field.Forbidden(specPath.Child(k.name), "may not specify more than 1 volume type"))
			continue
		}
		n++
		if k.validate != nil {
			errs = append(errs, k.validate()...)
		}
	}
	if n == 0 {
		errs = append(errs, field.Required(specPath, "must specify a volume type"))
	}
	return errs
}

// validateNodeSelector checks a required node selector: at least one term,
// and valid requirements on labels and fields.
func validateNodeSelector(s *corev1.NodeSelector, fldPath *field.Path) field.ErrorList {
	termsPath := fldPath.Child("nodeSelectorTerms")
	if len(s.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(termsPath, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, term := range s.NodeSelectorTerms {
		path := termsPath.Index(i)
		for j, r := range term.MatchExpressions {
			errs = append(errs, validateNodeSelectorRequirement(r, path.Child("matchExpressions").Index(j))...)
		}
		for j, r := range term.MatchFields {
			errs = append(errs, validateNodeFieldSelectorRequirement(r, path.Child("matchFields").Index(j))...)
		}
	}
	return errs
}

func validateNodeSelectorRequirement(r corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		errs = append(errs, field.Invalid(fldPath.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	errs = append(errs, metavalidation.ValidateLabelName(r.Key, fldPath.Child("key"))...)
	for i, v := range r.Values {
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(fldPath.Child("values").Index(i), v, msg))
		}
	}
	return errs
}

// validateNodeFieldSelectorRequirement allows one field, metadata.name,
// matched In or NotIn one node name.
func validateNodeFieldSelectorRequirement(r corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		errs = append(errs, field.Invalid(fldPath.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	if r.Key != metav1.ObjectNameField {
		return append(errs, field.Invalid(fldPath.Child("key"), r.Key, "not a valid field selector key"))
	}
	for i, v := range r.Values {
		errs = append(errs, validateSubdomainName(v, fldPath.Child("values").Index(i))...)
	}
	return errs
}
