package customresource

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateScaleSpec checks the value at the scale subresource's
// specReplicasPath: absent, or an integer from 0 to MaxInt32. Errors name
// the path as the CRD writes it (".spec.replicas").
func (s *Strategy) validateScaleSpec(u *unstructured.Unstructured) field.ErrorList {
	if s.scale == nil {
		return nil
	}
	return validateReplicas(u, s.scale.SpecReplicasPath)
}

// validateScaleStatus checks the values at statusReplicasPath (as spec
// replicas) and labelSelectorPath (absent or a string).
func (s *Strategy) validateScaleStatus(u *unstructured.Unstructured) field.ErrorList {
	if s.scale == nil {
		return nil
	}
	errs := validateReplicas(u, s.scale.StatusReplicasPath)
	if p := s.scale.LabelSelectorPath; p != nil {
		selector, _, err := unstructured.NestedString(u.Object, splitPath(*p)...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*p), selector, err.Error()))
		}
	}
	return errs
}

func validateReplicas(u *unstructured.Unstructured, path string) field.ErrorList {
	replicas, _, err := unstructured.NestedInt64(u.Object, splitPath(path)...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, err.Error())}
	case replicas < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, "should be a non-negative integer")}
	case replicas > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// standardFinalizers are the finalizers kube itself defines, which need no
// domain.
var standardFinalizers = sets.New(
	metav1.FinalizerOrphanDependents,
	metav1.FinalizerDeleteDependents,
	string(corev1.FinalizerKubernetes),
)

// finalizerWarnings are kube's warnings about the finalizers of obj that
// old did not have (all of them on create): names that are not qualified
// names, and names without a domain.
func finalizerWarnings(obj, old runtime.Object) []string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	added := sets.New(m.GetFinalizers()...)
	if old != nil {
		oldMeta, err := meta.Accessor(old)
		if err != nil {
			return nil
		}
		added = added.Difference(sets.New(oldMeta.GetFinalizers()...))
	}
	fldPath := field.NewPath("metadata", "finalizers")
	var warnings []string
	for _, f := range sets.List(added) {
		warnings = append(warnings, finalizerNameWarnings(f, fldPath)...)
	}
	return warnings
}

func finalizerNameWarnings(name string, fldPath *field.Path) []string {
	var warnings []string
	for _, msg := range validation.IsQualifiedName(name) {
		warnings = append(warnings, fmt.Sprintf("%s: %q: %s", fldPath, name, msg))
	}
	if !strings.Contains(name, "/") && !standardFinalizers.Has(name) {
		if strings.Contains(name, ".") {
			warnings = append(warnings, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers", fldPath, name))
		} else {
			warnings = append(warnings, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers", fldPath, name))
		}
	}
	return warnings
}
