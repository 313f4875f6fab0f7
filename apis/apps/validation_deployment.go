package apps

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateDeployment validates a new deployment, metadata excluded but for
// the deprecated rollback annotation, which kube reads as spec.rollbackTo.
func ValidateDeployment(d *appsv1.Deployment) field.ErrorList {
	errs := ValidateDeploymentSpec(&d.Spec, field.NewPath("spec"))
	return append(errs, validateRollbackAnnotation(d.Annotations)...)
}

// ValidateDeploymentUpdate validates an updated deployment: the rules of
// ValidateDeployment and an immutable selector.
func ValidateDeploymentUpdate(d, old *appsv1.Deployment) field.ErrorList {
	errs := ValidateDeployment(d)
	return append(errs, apivalidation.ValidateImmutableField(d.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

// ValidateDeploymentSpec validates the spec of a deployment.
func ValidateDeploymentSpec(spec *appsv1.DeploymentSpec, fldPath *field.Path) field.ErrorList {
	errs := nonNegative(deref32(spec.Replicas), fldPath.Child("replicas"))
	errs = append(errs, strictSelector(spec.Selector, "deployment", fldPath.Child("selector"))...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		errs = append(errs, field.Invalid(fldPath.Child("selector"), spec.Selector, "invalid label selector"))
	} else {
		errs = append(errs, replicaSetTemplate(&spec.Template, selector, fldPath.Child("template"))...)
	}
	errs = append(errs, validateDeploymentStrategy(&spec.Strategy, fldPath.Child("strategy"))...)
	errs = append(errs, nonNegative(spec.MinReadySeconds, fldPath.Child("minReadySeconds"))...)
	errs = append(errs, nonNegativePtr(spec.RevisionHistoryLimit, fldPath.Child("revisionHistoryLimit"))...)
	if pds := spec.ProgressDeadlineSeconds; pds != nil {
		errs = append(errs, nonNegative(*pds, fldPath.Child("progressDeadlineSeconds"))...)
		if *pds <= spec.MinReadySeconds {
			errs = append(errs, field.Invalid(fldPath.Child("progressDeadlineSeconds"), *pds, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, fldPath *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(fldPath.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		return validateRollingUpdateDeployment(s.RollingUpdate, fldPath.Child("rollingUpdate"))
	default:
		valid := []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}
		return field.ErrorList{field.NotSupported(fldPath, internalDeploymentStrategy(s), valid)}
	}
	return nil
}

func validateRollingUpdateDeployment(ru *appsv1.RollingUpdateDeployment, fldPath *field.Path) field.ErrorList {
	maxUnavailable, maxSurge := derefIntOrString(ru.MaxUnavailable), derefIntOrString(ru.MaxSurge)
	errs := validatePositiveIntOrPercent(maxUnavailable, fldPath.Child("maxUnavailable"))
	errs = append(errs, validatePositiveIntOrPercent(maxSurge, fldPath.Child("maxSurge"))...)
	if intOrPercentValue(maxUnavailable) == 0 && intOrPercentValue(maxSurge) == 0 {
		errs = append(errs, field.Invalid(fldPath.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	return append(errs, notMoreThan100Percent(maxUnavailable, fldPath.Child("maxUnavailable"))...)
}

// validateRollbackAnnotation checks the revision of the deprecated rollback
// annotation, which kube converts to spec.rollbackTo and validates there.
func validateRollbackAnnotation(annotations map[string]string) field.ErrorList {
	v := annotations[appsv1.DeprecatedRollbackTo]
	if v == "" {
		return nil
	}
	revision, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		msg := fmt.Sprintf("failed to parse annotation[%s]=%s as int64: %v", appsv1.DeprecatedRollbackTo, v, err)
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations").Key(appsv1.DeprecatedRollbackTo), v, msg)}
	}
	return nonNegative(revision, field.NewPath("spec", "rollback", "version"))
}

// ValidateDeploymentStatusUpdate validates the status of an updated
// deployment; collisionCount may not decrease.
func ValidateDeploymentStatusUpdate(d, old *appsv1.Deployment) field.ErrorList {
	fldPath := field.NewPath("status")
	errs := ValidateDeploymentStatus(&d.Status, fldPath)
	return append(errs, notDecremented(d.Status.CollisionCount, old.Status.CollisionCount, fldPath.Child("collisionCount"))...)
}

// ValidateDeploymentStatus validates the counters of a deployment status.
func ValidateDeploymentStatus(s *appsv1.DeploymentStatus, fldPath *field.Path) field.ErrorList {
	errs := nonNegative(s.ObservedGeneration, fldPath.Child("observedGeneration"))
	errs = append(errs, nonNegative(s.Replicas, fldPath.Child("replicas"))...)
	errs = append(errs, nonNegative(s.UpdatedReplicas, fldPath.Child("updatedReplicas"))...)
	errs = append(errs, nonNegative(s.ReadyReplicas, fldPath.Child("readyReplicas"))...)
	errs = append(errs, nonNegative(s.AvailableReplicas, fldPath.Child("availableReplicas"))...)
	errs = append(errs, nonNegative(s.UnavailableReplicas, fldPath.Child("unavailableReplicas"))...)
	errs = append(errs, nonNegativePtr(s.TerminatingReplicas, fldPath.Child("terminatingReplicas"))...)
	errs = append(errs, nonNegativePtr(s.CollisionCount, fldPath.Child("collisionCount"))...)
	errs = append(errs, atMostReplicas(s.UpdatedReplicas, s.Replicas, fldPath.Child("updatedReplicas"))...)
	errs = append(errs, atMostReplicas(s.ReadyReplicas, s.Replicas, fldPath.Child("readyReplicas"))...)
	errs = append(errs, atMostReplicas(s.AvailableReplicas, s.Replicas, fldPath.Child("availableReplicas"))...)
	return append(errs, availableAtMostReady(s.AvailableReplicas, s.ReadyReplicas, fldPath.Child("availableReplicas"), "cannot be greater than readyReplicas")...)
}
