package storage

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kube's bounds on provisioner parameters.
const (
	maxParameterSize  = 256 * (1 << 10)
	maxParameterCount = 512
)

var (
	reclaimPolicies = []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}
	bindingModes    = []string{string(storagev1.VolumeBindingImmediate), string(storagev1.VolumeBindingWaitForFirstConsumer)}
)

// ValidateStorageClass validates a class: a qualified provisioner, bounded
// parameters, a Delete or Retain reclaim policy, a binding mode and valid,
// distinct allowed topologies.
func ValidateStorageClass(sc *storagev1.StorageClass) field.ErrorList {
	errs := validateProvisioner(sc.Provisioner, field.NewPath("provisioner"))
	errs = append(errs, validateParameters(sc.Parameters, field.NewPath("parameters"))...)
	if p := sc.ReclaimPolicy; p != nil && *p != "" && !slices.Contains(reclaimPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), p, reclaimPolicies))
	}
	switch m := sc.VolumeBindingMode; {
	case m == nil:
		errs = append(errs, field.Required(field.NewPath("volumeBindingMode"), ""))
	case !slices.Contains(bindingModes, string(*m)):
		errs = append(errs, field.NotSupported(field.NewPath("volumeBindingMode"), m, bindingModes))
	}
	return append(errs, validateAllowedTopologies(sc.AllowedTopologies, field.NewPath("allowedTopologies"))...)
}

// validateProvisioner requires a qualified name, compared in lower case.
func validateProvisioner(p string, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath, p)}
	}
	return qualifiedName(strings.ToLower(p), fldPath)
}

func qualifiedName(v string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(v) {
		errs = append(errs, field.Invalid(fldPath, v, msg))
	}
	return errs
}

// validateParameters bounds the number and total size of parameters and
// refuses an empty key.
func validateParameters(params map[string]string, fldPath *field.Path) field.ErrorList {
	if len(params) > maxParameterCount {
		return field.ErrorList{field.TooLong(fldPath, "", maxParameterCount)}
	}
	var errs field.ErrorList
	size := 0
	for k, v := range params {
		if k == "" {
			errs = append(errs, field.Invalid(fldPath, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > maxParameterSize {
		errs = append(errs, field.TooLong(fldPath, "", maxParameterSize))
	}
	return errs
}

// validateAllowedTopologies validates each term and refuses a term equal to
// an earlier one. As in kube, the terms are compared with a list that starts
// with one empty entry per term, so a term without expressions is reported
// a duplicate of those.
func validateAllowedTopologies(terms []corev1.TopologySelectorTerm, fldPath *field.Path) field.ErrorList {
	if len(terms) == 0 {
		return nil
	}
	var errs field.ErrorList
	seen := make([]map[string]sets.Set[string], len(terms))
	for i, term := range terms {
		exprs, termErrs := validateTopologySelectorTerm(term, fldPath.Index(i))
		errs = append(errs, termErrs...)
		for _, s := range seen {
			if apiequality.Semantic.DeepEqual(exprs, s) {
				errs = append(errs, field.Duplicate(fldPath.Index(i).Child("matchLabelExpressions"), ""))
			}
		}
		seen = append(seen, exprs)
	}
	return errs
}

// validateTopologySelectorTerm validates the expressions of a term (values
// set and distinct, a label key, keys distinct) and returns them as a map.
func validateTopologySelectorTerm(term corev1.TopologySelectorTerm, fldPath *field.Path) (map[string]sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	exprs := map[string]sets.Set[string]{}
	for i, e := range term.MatchLabelExpressions {
		p := fldPath.Child("matchLabelExpressions").Index(i)
		values := sets.New[string]()
		if len(e.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), ""))
		}
		for j, v := range e.Values {
			if values.Has(v) {
				errs = append(errs, field.Duplicate(p.Child("values").Index(j), v))
			}
			values.Insert(v)
		}
		errs = append(errs, metav1validation.ValidateLabelName(e.Key, p.Child("key"))...)
		if _, ok := exprs[e.Key]; ok {
			errs = append(errs, field.Duplicate(p.Child("key"), e.Key))
		}
		exprs[e.Key] = values
	}
	return exprs, errs
}
