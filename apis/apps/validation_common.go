package apps

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
)

// Messages shared by several workloads, as kube words them.
const (
	selectorMismatchMsg = "`selector` does not match template `labels`"
	notGreaterThanMsg   = "cannot be greater than status.replicas"
)

// strictSelector validates the selector of a workload whose selector was
// always required: it must be set, valid with strict label values and not
// empty. kind names the workload in kube's empty-selector message.
func strictSelector(sel *metav1.LabelSelector, kind string, fldPath *field.Path) field.ErrorList {
	if sel == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}
	errs := metav1validation.ValidateLabelSelector(sel, opts, fldPath)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(fldPath, sel, "empty selector is invalid for "+kind))
	}
	return errs
}

// selectorMatchesTemplate reports the template labels that selector does not
// select. An empty selector selects everything and is reported elsewhere.
func selectorMatchesTemplate(selector labels.Selector, t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	if selector.Empty() || selector.Matches(labels.Set(t.Labels)) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath.Child("metadata", "labels"), t.Labels, selectorMismatchMsg)}
}

// alwaysRestartingTemplate checks what a template of a long-running workload
// may not have: a restart policy other than Always and an active deadline.
// kind names the workload in kube's message.
func alwaysRestartingTemplate(spec *corev1.PodSpec, kind string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(fldPath.Child("restartPolicy"), spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// replicaSetTemplate validates the template of a deployment or a replica
// set: labels selected by selector, a valid pod template, restart Always.
func replicaSetTemplate(t *corev1.PodTemplateSpec, selector labels.Selector, fldPath *field.Path) field.ErrorList {
	errs := selectorMatchesTemplate(selector, t, fldPath)
	errs = append(errs, core.ValidatePodTemplateSpec(t, fldPath)...)
	return append(errs, alwaysRestartingTemplate(&t.Spec, "ReplicaSet", fldPath.Child("spec"))...)
}

// nonNegative is kube's ValidateNonnegativeField for the integer types of
// the apps API.
func nonNegative[T int32 | int64](v T, fldPath *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(int64(v), fldPath)
}

// nonNegativePtr validates v when set.
func nonNegativePtr[T int32 | int64](v *T, fldPath *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return nonNegative(*v, fldPath)
}

// atMostReplicas checks that an observed count is at most status.replicas.
func atMostReplicas(v, replicas int32, fldPath *field.Path) field.ErrorList {
	if v > replicas {
		return field.ErrorList{field.Invalid(fldPath, v, notGreaterThanMsg)}
	}
	return nil
}

// availableAtMostReady checks that available is at most ready; msg is kube's
// wording, which differs between resources.
func availableAtMostReady(available, ready int32, fldPath *field.Path, msg string) field.ErrorList {
	if available > ready {
		return field.ErrorList{field.Invalid(fldPath, available, msg)}
	}
	return nil
}

// notDecremented rejects a collisionCount lower than the old one.
func notDecremented(v, old *int32, fldPath *field.Path) field.ErrorList {
	if old == nil || (v != nil && *v >= *old) {
		return nil
	}
	var value int32
	if v != nil {
		value = *v
	}
	return field.ErrorList{field.Invalid(fldPath, value, "cannot be decremented")}
}

// validatePositiveIntOrPercent accepts a non-negative integer or a
// percentage string such as "25%".
func validatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(fldPath, v, msg))
		}
	case intstr.Int:
		errs = append(errs, nonNegative(v.IntVal, fldPath)...)
	default:
		errs = append(errs, field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%%')"))
	}
	return errs
}

// percentValue returns the number of a valid percentage string.
func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

// intOrPercentValue is the number of v, whether a percentage or an integer;
// an invalid string counts as 0.
func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

// notMoreThan100Percent rejects a percentage above 100%.
func notMoreThan100Percent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if n, ok := percentValue(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(fldPath, v, "must not be greater than 100%")}
	}
	return nil
}

// derefIntOrString returns *v, or the zero integer when v is nil, as kube's
// internal types hold these fields by value.
func derefIntOrString(v *intstr.IntOrString) intstr.IntOrString {
	if v == nil {
		return intstr.IntOrString{}
	}
	return *v
}

// deref32 returns *v, or 0 when v is nil, as kube's internal types hold
// replicas by value.
func deref32(v *int32) int32 {
	if v == nil {
		return 0
	}
	return *v
}
