package apps

import (
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePositiveIntOrPercent accepts a non-negative integer or a
// percentage such as "25%". Other groups (policy's disruption budgets) share
// the rule with the rolling updates of apps.
func ValidatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	return validatePositiveIntOrPercent(v, fldPath)
}

// IsNotMoreThan100Percent rejects a percentage above 100%.
func IsNotMoreThan100Percent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	return notMoreThan100Percent(v, fldPath)
}
