package policy

import (
	"slices"

	policyv1 "k8s.io/api/policy/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/apps"
)

var unhealthyPodEvictionPolicies = []string{string(policyv1.AlwaysAllow), string(policyv1.IfHealthyBudget)}

// ValidatePDBSpec validates the spec of a budget: at most one of
// minAvailable and maxUnavailable, each a count or a percentage up to 100%,
// a valid selector and a known unhealthy pod eviction policy.
func ValidatePDBSpec(spec *policyv1.PodDisruptionBudgetSpec, allowInvalidLabelValue bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(fldPath, internalSpec(*spec), "minAvailable and maxUnavailable cannot be both set"))
	}
	if v := spec.MinAvailable; v != nil {
		errs = append(errs, apps.ValidatePositiveIntOrPercent(*v, fldPath.Child("minAvailable"))...)
		errs = append(errs, apps.IsNotMoreThan100Percent(*v, fldPath.Child("minAvailable"))...)
	}
	if v := spec.MaxUnavailable; v != nil {
		errs = append(errs, apps.ValidatePositiveIntOrPercent(*v, fldPath.Child("maxUnavailable"))...)
		errs = append(errs, apps.IsNotMoreThan100Percent(*v, fldPath.Child("maxUnavailable"))...)
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, opts, fldPath.Child("selector"))...)
	if p := spec.UnhealthyPodEvictionPolicy; p != nil && !slices.Contains(unhealthyPodEvictionPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(fldPath.Child("unhealthyPodEvictionPolicy"), *p, unhealthyPodEvictionPolicies))
	}
	return errs
}

// ValidatePDBStatus validates the status of a budget: valid conditions and
// non-negative counters.
func ValidatePDBStatus(s *policyv1.PodDisruptionBudgetStatus, fldPath *field.Path) field.ErrorList {
	errs := metav1validation.ValidateConditions(s.Conditions, fldPath.Child("conditions"))
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.DisruptionsAllowed), fldPath.Child("disruptionsAllowed"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.CurrentHealthy), fldPath.Child("currentHealthy"))...)
	errs = append(errs, apivalidation.ValidateNonnegativeField(int64(s.DesiredHealthy), fldPath.Child("desiredHealthy"))...)
	return append(errs, apivalidation.ValidateNonnegativeField(int64(s.ExpectedPods), fldPath.Child("expectedPods"))...)
}

// internalSpec has the fields of kube's internal PodDisruptionBudgetSpec,
// without JSON tags: kube shows that type in the message of an Invalid spec,
// so its keys are the Go field names.
type internalSpec struct {
	MinAvailable               *intstr.IntOrString
	Selector                   *metav1.LabelSelector
	MaxUnavailable             *intstr.IntOrString
	UnhealthyPodEvictionPolicy *policyv1.UnhealthyPodEvictionPolicyType
}
