package core

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateNamespace validates the spec of a namespace. As in kube, the errors
// of spec.finalizers name the list, not the item.
func ValidateNamespace(ns *corev1.Namespace) field.ErrorList {
	var errs field.ErrorList
	fldPath := field.NewPath("spec", "finalizers")
	for _, f := range ns.Spec.Finalizers {
		errs = append(errs, validateNamespaceFinalizer(string(f), fldPath)...)
	}
	return errs
}

// ValidateNamespaceStatusUpdate requires the phase Active while the namespace
// is not being deleted and Terminating once it is.
func ValidateNamespaceStatusUpdate(ns, _ *corev1.Namespace) field.ErrorList {
	// kube spells the field "status.Phase" here; clients match on it.
	phasePath := field.NewPath("status", "Phase")
	if ns.DeletionTimestamp.IsZero() {
		if ns.Status.Phase != corev1.NamespaceActive {
			return field.ErrorList{field.Invalid(phasePath, ns.Status.Phase,
				"may only be 'Active' if `deletionTimestamp` is empty")}
		}
		return nil
	}
	if ns.Status.Phase != corev1.NamespaceTerminating {
		return field.ErrorList{field.Invalid(phasePath, ns.Status.Phase,
			"may only be 'Terminating' if `deletionTimestamp` is not empty")}
	}
	return nil
}

// ValidateNamespaceFinalizeUpdate validates the finalizers set through the
// finalize subresource.
func ValidateNamespaceFinalizeUpdate(ns, _ *corev1.Namespace) field.ErrorList {
	var errs field.ErrorList
	fldPath := field.NewPath("spec", "finalizers")
	for i, f := range ns.Spec.Finalizers {
		errs = append(errs, validateNamespaceFinalizer(string(f), fldPath.Index(i))...)
	}
	return errs
}

// standardFinalizers are the finalizer names that need no domain prefix.
var standardFinalizers = map[string]bool{
	string(corev1.FinalizerKubernetes): true,
	metav1.FinalizerOrphanDependents:   true,
	metav1.FinalizerDeleteDependents:   true,
}

// validateNamespaceFinalizer requires a qualified name, and a domain-prefixed
// one unless it is a standard finalizer.
func validateNamespaceFinalizer(name string, fldPath *field.Path) field.ErrorList {
	errs := apivalidation.ValidateFinalizerName(name, fldPath)
	if !strings.Contains(name, "/") && !standardFinalizers[name] {
		errs = append(errs, field.Invalid(fldPath, name,
			"name is neither a standard finalizer name nor is it fully qualified"))
	}
	return errs
}
