package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
)

// ValidateDaemonSetSpec validates the spec of a daemon set.
// allowInvalidLabelValue tolerates selector values that older servers
// accepted, for updates of such daemon sets.
func ValidateDaemonSetSpec(spec *appsv1.DaemonSetSpec, fldPath *field.Path, allowInvalidLabelValue bool) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	errs := metav1validation.ValidateLabelSelector(spec.Selector, opts, fldPath.Child("selector"))
	// Unlike the other workloads, a daemon set reports a missing selector
	// only as one that does not match the template.
	selector, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err == nil && !selector.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels, selectorMismatchMsg))
	}
	if spec.Selector != nil && len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(fldPath.Child("selector"), spec.Selector, "empty selector is invalid for daemonset"))
	}
	errs = append(errs, core.ValidatePodTemplateSpec(&spec.Template, fldPath.Child("template"))...)
	errs = append(errs, alwaysRestartingTemplate(&spec.Template.Spec, "DaemonSet", fldPath.Child("template", "spec"))...)
	errs = append(errs, nonNegative(spec.MinReadySeconds, fldPath.Child("minReadySeconds"))...)
	errs = append(errs, validateDaemonSetUpdateStrategy(&spec.UpdateStrategy, fldPath.Child("updateStrategy"))...)
	return append(errs, nonNegativePtr(spec.RevisionHistoryLimit, fldPath.Child("revisionHistoryLimit"))...)
}

func validateDaemonSetUpdateStrategy(s *appsv1.DaemonSetUpdateStrategy, fldPath *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
		return nil
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "")}
		}
		return validateRollingUpdateDaemonSet(s.RollingUpdate, fldPath.Child("rollingUpdate"))
	}
	valid := []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)}
	return field.ErrorList{field.NotSupported(fldPath, internalDaemonSetStrategy(s), valid)}
}

// validateRollingUpdateDaemonSet requires exactly one of maxUnavailable and
// maxSurge to be non-zero.
func validateRollingUpdateDaemonSet(ru *appsv1.RollingUpdateDaemonSet, fldPath *field.Path) field.ErrorList {
	maxUnavailable, maxSurge := derefIntOrString(ru.MaxUnavailable), derefIntOrString(ru.MaxSurge)
	unavailablePath, surgePath := fldPath.Child("maxUnavailable"), fldPath.Child("maxSurge")
	errs := validatePositiveIntOrPercent(maxUnavailable, unavailablePath)
	errs = append(errs, validatePositiveIntOrPercent(maxSurge, surgePath)...)
	errs = append(errs, notMoreThan100Percent(maxUnavailable, unavailablePath)...)
	errs = append(errs, notMoreThan100Percent(maxSurge, surgePath)...)
	hasUnavailable, hasSurge := intOrPercentValue(maxUnavailable) != 0, intOrPercentValue(maxSurge) != 0
	switch {
	case hasUnavailable && hasSurge:
		errs = append(errs, field.Invalid(surgePath, maxSurge, "may not be set when maxUnavailable is non-zero"))
	case !hasUnavailable && !hasSurge:
		errs = append(errs, field.Required(unavailablePath, "cannot be 0 when maxSurge is 0"))
	}
	return errs
}

// ValidateDaemonSetUpdate validates an updated daemon set: an immutable
// selector and the rules of the spec.
func ValidateDaemonSetUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := apivalidation.ValidateImmutableField(ds.Spec.Selector, old.Spec.Selector, specPath.Child("selector"))
	allowInvalid := metav1validation.LabelSelectorHasInvalidLabelValue(old.Spec.Selector)
	return append(errs, ValidateDaemonSetSpec(&ds.Spec, specPath, allowInvalid)...)
}

// ValidateDaemonSetStatusUpdate validates the status of an updated daemon
// set; collisionCount may not decrease.
func ValidateDaemonSetStatusUpdate(ds, old *appsv1.DaemonSet) field.ErrorList {
	fldPath := field.NewPath("status")
	s := &ds.Status
	errs := nonNegative(s.CurrentNumberScheduled, fldPath.Child("currentNumberScheduled"))
	errs = append(errs, nonNegative(s.NumberMisscheduled, fldPath.Child("numberMisscheduled"))...)
	errs = append(errs, nonNegative(s.DesiredNumberScheduled, fldPath.Child("desiredNumberScheduled"))...)
	errs = append(errs, nonNegative(s.NumberReady, fldPath.Child("numberReady"))...)
	errs = append(errs, nonNegative(s.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	errs = append(errs, nonNegative(s.UpdatedNumberScheduled, fldPath.Child("updatedNumberScheduled"))...)
	errs = append(errs, nonNegative(s.NumberAvailable, fldPath.Child("numberAvailable"))...)
	errs = append(errs, nonNegative(s.NumberUnavailable, fldPath.Child("numberUnavailable"))...)
	errs = append(errs, nonNegativePtr(s.CollisionCount, fldPath.Child("collisionCount"))...)
	return append(errs, notDecremented(s.CollisionCount, old.Status.CollisionCount, fldPath.Child("collisionCount"))...)
}
