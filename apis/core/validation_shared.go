package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The validation rules other API groups share with core/v1: the scheduling
// fields of RuntimeClasses and PriorityClasses are pod fields.

// ValidateTolerations checks tolerations as a pod's are checked.
func ValidateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	return validateTolerations(tolerations, fldPath)
}

// ValidatePreemptionPolicy checks a preemption policy as a pod's is checked.
func ValidatePreemptionPolicy(p *corev1.PreemptionPolicy, fldPath *field.Path) field.ErrorList {
	return validatePreemptionPolicy(p, fldPath)
}

// ValidateOverhead checks a pod overhead: container resource names and
// quantities, as kube checks limits (so errors name fldPath.limits).
func ValidateOverhead(overhead corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	return validateResourceRequirements(&corev1.ResourceRequirements{Limits: overhead}, validateContainerResourceName, nil, fldPath)
}

// validateResourceQuantityValue is kube's check of a quantity in a resource
// list outside containers (node capacity, quota): not negative, and whole
// for resources counted in units.
func validateResourceQuantityValue(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(fldPath, q.String(), "must be greater than or equal to 0"))
	}
	if isIntegerResource(name) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(fldPath, q, "must be an integer"))
	}
	return errs
}

// validatePositiveQuantity requires a quantity above zero.
func validatePositiveQuantity(q resource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must be greater than zero")}
	}
	return nil
}
