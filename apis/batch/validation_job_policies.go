package batch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	maxPodFailurePolicyRules                   = 20
	maxPodFailurePolicyOnExitCodesValues       = 255
	maxPodFailurePolicyOnPodConditionsPatterns = 20
	maxSuccessPolicyRules                      = 20
	maxSucceededIndexesLength                  = 64 * 1024
)

// The supported values, sorted as kube lists them in its messages.
var (
	podFailurePolicyActions = []batchv1.PodFailurePolicyAction{
		batchv1.PodFailurePolicyActionCount, batchv1.PodFailurePolicyActionFailIndex,
		batchv1.PodFailurePolicyActionFailJob, batchv1.PodFailurePolicyActionIgnore,
	}
	exitCodesOperators     = []batchv1.PodFailurePolicyOnExitCodesOperator{batchv1.PodFailurePolicyOnExitCodesOpIn, batchv1.PodFailurePolicyOnExitCodesOpNotIn}
	podConditionStatuses   = []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionUnknown}
	podReplacementPolicies = []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed}
)

func validatePodFailurePolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	rulesPath := fldPath.Child("rules")
	rules := spec.PodFailurePolicy.Rules
	if len(rules) > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rulesPath, len(rules), maxPodFailurePolicyRules))
	}
	var containers []string
	for _, c := range spec.Template.Spec.Containers {
		containers = append(containers, c.Name)
	}
	for _, c := range spec.Template.Spec.InitContainers {
		containers = append(containers, c.Name)
	}
	for i := range rules {
		errs = append(errs, validatePodFailurePolicyRule(spec, &rules[i], rulesPath.Index(i), containers)...)
	}
	return errs
}

func validatePodFailurePolicyRule(spec *batchv1.JobSpec, rule *batchv1.PodFailurePolicyRule, fldPath *field.Path, containers []string) field.ErrorList {
	var errs field.ErrorList
	actionPath := fldPath.Child("action")
	switch {
	case rule.Action == "":
		errs = append(errs, field.Required(actionPath, fmt.Sprintf("valid values: %q", podFailurePolicyActions)))
	case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
		if spec.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Invalid(actionPath, rule.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !slices.Contains(podFailurePolicyActions, rule.Action):
		errs = append(errs, field.NotSupported(actionPath, rule.Action, podFailurePolicyActions))
	}
	if rule.OnExitCodes != nil {
		errs = append(errs, validateOnExitCodes(rule.OnExitCodes, fldPath.Child("onExitCodes"), containers)...)
	}
	if len(rule.OnPodConditions) > 0 {
		errs = append(errs, validateOnPodConditions(rule.OnPodConditions, fldPath.Child("onPodConditions"))...)
	}
	switch {
	case rule.OnExitCodes != nil && len(rule.OnPodConditions) > 0:
		errs = append(errs, field.Invalid(fldPath, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	case rule.OnExitCodes == nil && len(rule.OnPodConditions) == 0:
		errs = append(errs, field.Invalid(fldPath, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return errs
}

func validateOnPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(patterns) > maxPodFailurePolicyOnPodConditionsPatterns {
		errs = append(errs, field.TooMany(fldPath, len(patterns), maxPodFailurePolicyOnPodConditionsPatterns))
	}
	for i, p := range patterns {
		for _, msg := range validation.IsQualifiedName(string(p.Type)) {
			errs = append(errs, field.Invalid(fldPath.Index(i).Child("type"), string(p.Type), msg))
		}
		statusPath := fldPath.Index(i).Child("status")
		switch {
		case p.Status == "":
			errs = append(errs, field.Required(statusPath, fmt.Sprintf("valid values: %q", podConditionStatuses)))
		case !slices.Contains(podConditionStatuses, p.Status):
			errs = append(errs, field.NotSupported(statusPath, p.Status, podConditionStatuses))
		}
	}
	return errs
}

func validateOnExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, fldPath *field.Path, containers []string) field.ErrorList {
	var errs field.ErrorList
	operatorPath := fldPath.Child("operator")
	switch {
	case req.Operator == "":
		errs = append(errs, field.Required(operatorPath, fmt.Sprintf("valid values: %q", exitCodesOperators)))
	case !slices.Contains(exitCodesOperators, req.Operator):
		errs = append(errs, field.NotSupported(operatorPath, req.Operator, exitCodesOperators))
	}
	if req.ContainerName != nil && !slices.Contains(containers, *req.ContainerName) {
		errs = append(errs, field.Invalid(fldPath.Child("containerName"), *req.ContainerName, "must be one of the container or initContainer names in the pod template"))
	}
	valuesPath := fldPath.Child("values")
	switch n := len(req.Values); {
	case n == 0:
		errs = append(errs, field.Invalid(valuesPath, req.Values, "at least one value is required"))
	case n > maxPodFailurePolicyOnExitCodesValues:
		errs = append(errs, field.TooMany(valuesPath, n, maxPodFailurePolicyOnExitCodesValues))
	}
	seen := make(map[int32]bool, len(req.Values))
	for i, v := range req.Values {
		if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			errs = append(errs, field.Invalid(valuesPath.Index(i), v, "must not be 0 for the In operator"))
		}
		if seen[v] {
			errs = append(errs, field.Duplicate(valuesPath.Index(i), v))
		}
		seen[v] = true
	}
	if !slices.IsSorted(req.Values) {
		errs = append(errs, field.Invalid(valuesPath, req.Values, "must be ordered"))
	}
	return errs
}

func validatePodReplacementPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	p := spec.PodReplacementPolicy
	switch {
	case p == nil:
	case spec.PodFailurePolicy != nil:
		if *p != batchv1.Failed {
			return field.ErrorList{field.NotSupported(fldPath, *p, []batchv1.PodReplacementPolicy{batchv1.Failed})}
		}
	case !slices.Contains(podReplacementPolicies, *p):
		return field.ErrorList{field.NotSupported(fldPath, *p, podReplacementPolicies)}
	}
	return nil
}

// validateSuccessPolicy validates the success policy of an indexed job.
func validateSuccessPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	rulesPath := fldPath.Child("rules")
	rules := spec.SuccessPolicy.Rules
	if len(rules) == 0 {
		errs = append(errs, field.Required(rulesPath, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > maxSuccessPolicyRules {
		errs = append(errs, field.TooMany(rulesPath, len(rules), maxSuccessPolicyRules))
	}
	for i := range rules {
		errs = append(errs, validateSuccessPolicyRule(spec, &rules[i], rulesPath.Index(i))...)
	}
	return errs
}

func validateSuccessPolicyRule(spec *batchv1.JobSpec, rule *batchv1.SuccessPolicyRule, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
		errs = append(errs, field.Required(fldPath, "at least one of succeededCount or succeededIndexes must be specified"))
	}
	if spec.Completions == nil {
		// Reported as a required completions of an indexed job.
		return errs
	}
	completions := *spec.Completions
	var total int32
	if rule.SucceededIndexes != nil {
		path := fldPath.Child("succeededIndexes")
		if len(*rule.SucceededIndexes) > maxSucceededIndexesLength {
			errs = append(errs, field.TooLong(path, "", maxSucceededIndexesLength))
		}
		var err error
		if total, err = validateIndexesFormat(*rule.SucceededIndexes, completions); err != nil {
			errs = append(errs, field.Invalid(path, *rule.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err)))
		}
	}
	if c := rule.SucceededCount; c != nil {
		path := fldPath.Child("succeededCount")
		errs = append(errs, nonNegative(*c, path)...)
		if *c > completions {
			errs = append(errs, field.Invalid(path, *c, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
		}
		if rule.SucceededIndexes != nil && *c > total {
			errs = append(errs, field.Invalid(path, *c, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
		}
	}
	return errs
}

// validateIndexesFormat parses a list of indexes such as "1,3-5,7",
// increasing and below completions, and returns how many it holds.
func validateIndexesFormat(indexes string, completions int32) (int32, error) {
	if indexes == "" {
		return 0, nil
	}
	var total int32
	last := int32(-1)
	for _, interval := range strings.Split(indexes, ",") {
		x, y, err := parseIndexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", last, x)
		}
		total += y - x + 1
		last = y
	}
	return total, nil
}

// parseIndexInterval parses "x" or "x-y", with x < y < completions.
func parseIndexInterval(interval string, completions int32) (int32, int32, error) {
	limits := strings.Split(interval, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", interval)
	}
	bounds := make([]int32, len(limits))
	for i, s := range limits {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", s)
		}
		if n >= int(completions) {
			return 0, 0, fmt.Errorf("too large index: %q", s)
		}
		bounds[i] = int32(n)
	}
	x, y := bounds[0], bounds[len(bounds)-1]
	if len(bounds) == 2 && x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return x, y, nil
}

// indexesOverlap reports the first index both lists hold, walking the
// intervals of each in order and skipping those that do not parse, which the
// format checks report.
func indexesOverlap(completed, failed string, completions int32) error {
	if completed == "" || failed == "" {
		return nil
	}
	cs, fs := strings.Split(completed, ","), strings.Split(failed, ",")
	ci, fi := 0, 0
	for ci < len(cs) && fi < len(fs) {
		cx, cy, cerr := parseIndexInterval(cs[ci], completions)
		if cerr != nil {
			ci++
			continue
		}
		fx, fy, ferr := parseIndexInterval(fs[fi], completions)
		if ferr != nil {
			fi++
			continue
		}
		if cx <= fy && fx <= cy {
			return fmt.Errorf("failedIndexes and completedIndexes overlap at index: %d", max(cx, fx))
		}
		if cx <= fx {
			ci++
		} else {
			fi++
		}
	}
	return nil
}
