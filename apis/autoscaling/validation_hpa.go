package autoscaling

import (
	"errors"
	"fmt"
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits of the scaling rules, as kube's.
const (
	maxPeriodSeconds              int32 = 1800
	maxStabilizationWindowSeconds int32 = 3600
)

// refOptions says how strictly a CrossVersionObjectReference's apiVersion is
// checked.
type refOptions struct {
	allowEmptyGroup  bool // a core group version ("v1") is accepted
	skipVersionCheck bool // the apiVersion is not checked at all
}

// specOptions are the rules of an autoscaler's spec that depend on the
// object's history.
type specOptions struct {
	minReplicasLowerBound int32
	scaleTargetRef        refOptions
	objectMetrics         refOptions
}

// hpaSpecOptions are kube's options for new, or for an update of old. The
// HPAScaleToZero gate is on in 1.37: minReplicas may be 0.
func hpaSpecOptions(h, old *autoscalingv2.HorizontalPodAutoscaler) specOptions {
	opts := specOptions{objectMetrics: refOptions{allowEmptyGroup: true}}
	ref := h.Spec.ScaleTargetRef
	switch {
	case old != nil && old.Spec.ScaleTargetRef.APIVersion == ref.APIVersion && old.Spec.ScaleTargetRef.Kind == ref.Kind:
		// An update that keeps kind and apiVersion does not check them again.
		opts.scaleTargetRef.skipVersionCheck = true
	case ref.Kind == "ReplicationController":
		// The one scalable kind of the core group.
		opts.scaleTargetRef.allowEmptyGroup = true
	}
	if old != nil {
		for _, m := range old.Spec.Metrics {
			if m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil &&
				checkAPIVersion(m.Object.DescribedObject, opts.objectMetrics) != nil {
				// Metrics that were already invalid stay accepted.
				opts.objectMetrics.skipVersionCheck = true
				break
			}
		}
	}
	return opts
}

// ValidateHPASpec validates the spec of an autoscaler; old is nil on create.
func ValidateHPASpec(h, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	return validateHPASpec(&h.Spec, field.NewPath("spec"), hpaSpecOptions(h, old))
}

func validateHPASpec(spec *autoscalingv2.HorizontalPodAutoscalerSpec, fldPath *field.Path, opts specOptions) field.ErrorList {
	var errs field.ErrorList
	if spec.MinReplicas != nil && *spec.MinReplicas < opts.minReplicasLowerBound {
		errs = append(errs, field.Invalid(fldPath.Child("minReplicas"), *spec.MinReplicas,
			fmt.Sprintf("must be greater than or equal to %d", opts.minReplicasLowerBound)))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(fldPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateCrossVersionRef(spec.ScaleTargetRef, fldPath.Child("scaleTargetRef"), opts.scaleTargetRef)...)
	errs = append(errs, validateMetrics(spec.Metrics, fldPath.Child("metrics"), spec.MinReplicas, opts.objectMetrics)...)
	if b := spec.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, fldPath.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, fldPath.Child("behavior", "scaleDown"))...)
	}
	// maxReplicas's required and minimum rules are kube's declarative
	// validation (authoritative since 1.37): their errors come last, and the
	// required one says no more than "Required value".
	switch {
	case spec.MaxReplicas == 0:
		errs = append(errs, field.Required(fldPath.Child("maxReplicas"), ""))
	case spec.MaxReplicas < 0:
		errs = append(errs, field.Invalid(fldPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to 1"))
	}
	return errs
}

func validateCrossVersionRef(ref autoscalingv2.CrossVersionObjectReference, fldPath *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, pathSegment(ref.Kind, fldPath.Child("kind"))...)
	errs = append(errs, pathSegment(ref.Name, fldPath.Child("name"))...)
	if err := checkAPIVersion(ref, opts); err != nil {
		errs = append(errs, field.Invalid(fldPath.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	return errs
}

// pathSegment requires a name that can be a segment of a URL path.
func pathSegment(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(name) {
		errs = append(errs, field.Invalid(fldPath, name, msg))
	}
	return errs
}

func checkAPIVersion(ref autoscalingv2.CrossVersionObjectReference, opts refOptions) error {
	if opts.skipVersionCheck {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return err
	}
	if !opts.allowEmptyGroup && gv.Group == "" {
		return errors.New("apiVersion must specify API group")
	}
	return nil
}

var (
	selectPolicies = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	policyTypes    = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
)

func validateScalingRules(rules *autoscalingv2.HPAScalingRules, fldPath *field.Path) field.ErrorList {
	if rules == nil {
		return nil
	}
	var errs field.ErrorList
	if w := rules.StabilizationWindowSeconds; w != nil && *w < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), w, "must be greater than or equal to zero"))
	}
	if w := rules.StabilizationWindowSeconds; w != nil && *w > maxStabilizationWindowSeconds {
		errs = append(errs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), w,
			fmt.Sprintf("must be less than or equal to %v", maxStabilizationWindowSeconds)))
	}
	if p := rules.SelectPolicy; p != nil && !slices.Contains(selectPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(fldPath.Child("selectPolicy"), p, selectPolicies))
	}
	policiesPath := fldPath.Child("policies")
	if len(rules.Policies) == 0 {
		errs = append(errs, field.Required(policiesPath, "must specify at least one Policy"))
	}
	for i, p := range rules.Policies {
		errs = append(errs, validateScalingPolicy(p, policiesPath.Index(i))...)
	}
	if t := rules.Tolerance; t != nil && t.Cmp(resource.Quantity{}) < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("tolerance"), t.String(), apivalidation.IsNegativeErrorMsg))
	}
	return errs
}

func validateScalingPolicy(p autoscalingv2.HPAScalingPolicy, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.Type != autoscalingv2.PodsScalingPolicy && p.Type != autoscalingv2.PercentScalingPolicy {
		errs = append(errs, field.NotSupported(fldPath.Child("type"), p.Type, policyTypes))
	}
	if p.Value <= 0 {
		errs = append(errs, field.Invalid(fldPath.Child("value"), p.Value, "must be greater than zero"))
	}
	if p.PeriodSeconds <= 0 {
		errs = append(errs, field.Invalid(fldPath.Child("periodSeconds"), p.PeriodSeconds, "must be greater than zero"))
	}
	if p.PeriodSeconds > maxPeriodSeconds {
		errs = append(errs, field.Invalid(fldPath.Child("periodSeconds"), p.PeriodSeconds,
			fmt.Sprintf("must be less than or equal to %v", maxPeriodSeconds)))
	}
	return errs
}

// ValidateHPAStatus validates the status an update of autoscalers/status
// writes.
func ValidateHPAStatus(s *autoscalingv2.HorizontalPodAutoscalerStatus) field.ErrorList {
	var errs field.ErrorList
	fldPath := field.NewPath("status")
	for i, c := range s.Conditions {
		if c.ObservedGeneration != nil {
			errs = append(errs, apivalidation.ValidateNonnegativeField(*c.ObservedGeneration, fldPath.Child("conditions").Index(i).Child("observedGeneration"))...)
		}
	}
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.CurrentReplicas), fldPath.Child("currentReplicas"))...)
	return append(errs, apivalidation.ValidateNonnegativeField(int64(s.DesiredReplicas), fldPath.Child("desiredReplicas"))...)
}
