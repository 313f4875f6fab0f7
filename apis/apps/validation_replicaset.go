package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateReplicaSetSpec validates the spec of a replica set.
func ValidateReplicaSetSpec(spec *appsv1.ReplicaSetSpec, fldPath *field.Path) field.ErrorList {
	errs := nonNegative(deref32(spec.Replicas), fldPath.Child("replicas"))
	errs = append(errs, nonNegative(spec.MinReadySeconds, fldPath.Child("minReadySeconds"))...)
	// kube names deployments in the message of replica sets too.
	errs = append(errs, strictSelector(spec.Selector, "deployment", fldPath.Child("selector"))...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		errs = append(errs, field.Invalid(fldPath.Child("selector"), spec.Selector, "invalid label selector"))
	} else {
		errs = append(errs, replicaSetTemplate(&spec.Template, selector, fldPath.Child("template"))...)
	}
	return errs
}

// ValidateReplicaSetUpdate validates an updated replica set: the rules of a
// new one and an immutable selector.
func ValidateReplicaSetUpdate(rs, old *appsv1.ReplicaSet) field.ErrorList {
	errs := ValidateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))
	return append(errs, apivalidation.ValidateImmutableField(rs.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
}

// ValidateReplicaSetStatus validates the counters of a replica set status.
func ValidateReplicaSetStatus(s *appsv1.ReplicaSetStatus, fldPath *field.Path) field.ErrorList {
	errs := nonNegative(s.Replicas, fldPath.Child("replicas"))
	errs = append(errs, nonNegative(s.FullyLabeledReplicas, fldPath.Child("fullyLabeledReplicas"))...)
	errs = append(errs, nonNegative(s.ReadyReplicas, fldPath.Child("readyReplicas"))...)
	errs = append(errs, nonNegative(s.AvailableReplicas, fldPath.Child("availableReplicas"))...)
	errs = append(errs, nonNegative(s.ObservedGeneration, fldPath.Child("observedGeneration"))...)
	errs = append(errs, nonNegativePtr(s.TerminatingReplicas, fldPath.Child("terminatingReplicas"))...)
	errs = append(errs, atMostReplicas(s.FullyLabeledReplicas, s.Replicas, fldPath.Child("fullyLabeledReplicas"))...)
	errs = append(errs, atMostReplicas(s.ReadyReplicas, s.Replicas, fldPath.Child("readyReplicas"))...)
	errs = append(errs, atMostReplicas(s.AvailableReplicas, s.Replicas, fldPath.Child("availableReplicas"))...)
	return append(errs, availableAtMostReady(s.AvailableReplicas, s.ReadyReplicas, fldPath.Child("availableReplicas"), "cannot be greater than readyReplicas")...)
}
