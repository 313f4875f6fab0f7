package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateProjected checks a projected volume: modes, one kind per source,
// and that no two sources write the same path. Cluster trust bundle and pod
// certificate sources count as sources; their fields are not checked.
func validateProjected(p *corev1.ProjectedVolumeSource, fldPath *field.Path) field.ErrorList {
	errs := validateFileMode(p.DefaultMode, fldPath.Child("defaultMode"))
	errs = append(errs, validateUserID(p.DefaultUser, fldPath.Child("defaultUser"))...)
	paths := sets.New[string]()
	// addPath records a written path; kube reports a clash against the
	// whole volume, with the source's name or the path as the value.
	addPath := func(p string, value any) {
		if paths.Has(p) {
			errs = append(errs, field.Invalid(fldPath, value, "conflicting duplicate paths"))
		}
		paths.Insert(p)
	}
	for i := range p.Sources {
		src, srcPath := &p.Sources[i], fldPath.Child("sources").Index(i)
		n := 0
		if s := src.Secret; s != nil {
			n++
			errs = append(errs, validateProjectedItems(s.Name, s.Items, srcPath.Child("secret"), addPath)...)
		}
		if c := src.ConfigMap; c != nil {
			n++
			errs = append(errs, validateProjectedItems(c.Name, c.Items, srcPath.Child("configMap"), addPath)...)
		}
		if d := src.DownwardAPI; d != nil {
			n++
			for j := range d.Items {
				errs = append(errs, validateDownwardAPIFile(&d.Items[j], srcPath.Child("downwardAPI"))...)
				if d.Items[j].Path != "" {
					addPath(d.Items[j].Path, d.Items[j].Path)
				}
			}
		}
		if t := src.ServiceAccountToken; t != nil {
			n++
			errs = append(errs, validateTokenProjection(t, srcPath.Child("serviceAccountToken"), fldPath)...)
		}
		if src.ClusterTrustBundle != nil {
			n++
			addPath(src.ClusterTrustBundle.Path, src.ClusterTrustBundle.Path)
		}
		if src.PodCertificate != nil {
			n++
		}
		if n > 1 {
			errs = append(errs, field.Forbidden(srcPath, "may not specify more than 1 volume type per source"))
		}
	}
	return errs
}

func validateProjectedItems(name string, items []corev1.KeyToPath, fldPath *field.Path, addPath func(string, any)) field.ErrorList {
	errs := validateRequiredString(name, fldPath.Child("name"))
	for i := range items {
		errs = append(errs, validateKeyToPath(&items[i], fldPath.Child("items").Index(i))...)
		if items[i].Path != "" {
			addPath(items[i].Path, name)
		}
	}
	return errs
}

// validateTokenProjection checks a service account token source. kube
// reports its path at the volume's path, not the source's.
func validateTokenProjection(t *corev1.ServiceAccountTokenProjection, fldPath, volPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch exp := t.ExpirationSeconds; {
	case exp == nil:
		errs = append(errs, field.Required(fldPath.Child("expirationSeconds"), ""))
	case *exp < 10*60:
		errs = append(errs, field.Invalid(fldPath.Child("expirationSeconds"), *exp, "may not specify a duration less than 10 minutes"))
	case *exp > 1<<32:
		errs = append(errs, field.Invalid(fldPath.Child("expirationSeconds"), *exp, "may not specify a duration larger than 2^32 seconds"))
	}
	if t.Path == "" {
		errs = append(errs, field.Required(volPath.Child("path"), ""))
	} else {
		errs = append(errs, validateLocalNonReservedPath(t.Path, volPath.Child("path"))...)
	}
	return append(errs, validateUserID(t.User, fldPath.Child("user"))...)
}

// validateTemplateObjectMeta checks the metadata of an embedded template
// that may only have labels and annotations.
func validateTemplateObjectMeta(m *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	errs := apivalidation.ValidateAnnotations(m.Annotations, fldPath.Child("annotations"))
	errs = append(errs, metavalidation.ValidateLabels(m.Labels, fldPath.Child("labels"))...)
	rest := *m
	rest.Labels, rest.Annotations = nil, nil
	return append(errs, validateFieldAllowList(rest, nil, "cannot be set", fldPath)...)
}

var pvcAccessModes = []string{string(corev1.ReadOnlyMany), string(corev1.ReadWriteMany),
	string(corev1.ReadWriteOnce), string(corev1.ReadWriteOncePod)}

// validatePVCSpec checks the parts of a claim spec users get wrong: access
// modes, the storage request, class and volume mode. Data sources are not
// checked.
func validatePVCSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.AccessModes) == 0 {
		errs = append(errs, field.Required(fldPath.Child("accessModes"), "at least 1 access mode is required"))
	}
	if spec.Selector != nil {
		errs = append(errs, metavalidation.ValidateLabelSelector(spec.Selector, metavalidation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))...)
	}
	rwop, other := false, false
	for _, mode := range spec.AccessModes {
		switch {
		case mode == corev1.ReadWriteOncePod:
			rwop = true
		case sets.New(pvcAccessModes...).Has(string(mode)):
			other = true
		default:
			errs = append(errs, field.NotSupported(fldPath.Child("accessModes"), mode, pvcAccessModes))
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(fldPath.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(storagePath, ""))
	} else if q.Cmp(resource.Quantity{}) <= 0 {
		errs = append(errs, field.Invalid(storagePath, q.String(), "must be greater than zero"))
	}
	if c := spec.StorageClassName; c != nil && *c != "" {
		errs = append(errs, validateSubdomainName(*c, fldPath.Child("storageClassName"))...)
	}
	if m := spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeBlock && *m != corev1.PersistentVolumeFilesystem {
		errs = append(errs, field.NotSupported(fldPath.Child("volumeMode"), *m,
			[]string{string(corev1.PersistentVolumeBlock), string(corev1.PersistentVolumeFilesystem)}))
	}
	return errs
}
