package batch

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/core"
)

const (
	// maxParallelismForIndexedJob caps the length of status.completedIndexes.
	maxParallelismForIndexedJob = 100_000
	// maxFailedIndexesForIndexedJob caps the length of status.failedIndexes.
	maxFailedIndexesForIndexedJob = 100_000
	// Above completionsSoftLimit, a job with a backoff limit per index must
	// bound its failed indexes and parallelism more tightly.
	completionsSoftLimit                    = 100_000
	parallelismLimitForHighCompletions      = 10_000
	maxFailedIndexesLimitForHighCompletions = 10_000
	maxManagedByLength                      = 63
)

// ValidateJob validates a new job: the generated selector and labels, the
// spec, and a name that leaves room for the index of indexed pods.
func ValidateJob(job *batchv1.Job) field.ErrorList {
	errs := validateGeneratedSelector(job)
	errs = append(errs, validateJobSpec(&job.Spec, field.NewPath("spec"), false)...)
	return append(errs, validateNameAllowsCompletions(job)...)
}

// ValidateJobUpdate validates an updated job.
func ValidateJobUpdate(job, old *batchv1.Job) field.ErrorList {
	errs := validateJobSpecUpdate(&job.Spec, old, field.NewPath("spec"))
	return append(errs, validateNameAllowsCompletions(job)...)
}

// validateGeneratedSelector checks, unless the selector is manual, that the
// pod template carries the labels generated from the job's name and uid and
// that the selector selects them.
func validateGeneratedSelector(job *batchv1.Job) field.ErrorList {
	if ptr.Deref(job.Spec.ManualSelector, false) || job.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if job.UID == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	metaPath := field.NewPath("spec", "template", "metadata")
	uid, name := string(job.UID), job.Name
	for _, l := range []struct{ key, value string }{
		{legacyControllerUIDLabel, uid}, {legacyJobNameLabel, name},
		{batchv1.ControllerUidLabel, uid}, {batchv1.JobNameLabel, name},
	} {
		errs = append(errs, hasLabel(job.Spec.Template.Labels, metaPath, l.key, l.value)...)
	}
	expected := labels.Set{
		batchv1.ControllerUidLabel: uid, batchv1.JobNameLabel: name,
		legacyControllerUIDLabel: uid, legacyJobNameLabel: name,
	}
	if selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !selector.Matches(expected) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), job.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

func hasLabel(ls map[string]string, metaPath *field.Path, key, want string) field.ErrorList {
	path := metaPath.Child("labels").Key(key)
	got, ok := ls[key]
	switch {
	case !ok:
		return field.ErrorList{field.Required(path, fmt.Sprintf("must be '%s'", want))}
	case got != want:
		return field.ErrorList{field.Invalid(path, ls, fmt.Sprintf("must be '%s'", want))}
	}
	return nil
}

// validateNameAllowsCompletions requires that the hostname of the last pod
// of an indexed job, the job name and the highest index, is a DNS label.
func validateNameAllowsCompletions(job *batchv1.Job) field.ErrorList {
	completions := ptr.Deref(job.Spec.Completions, 0)
	if ptr.Deref(job.Spec.CompletionMode, "") != batchv1.IndexedCompletion || completions <= 0 {
		return nil
	}
	hostname := fmt.Sprintf("%s-%d", job.Name, completions-1)
	if len(validation.IsDNS1123Label(hostname)) == 0 {
		return nil
	}
	msg := fmt.Sprintf("will not able to create pod with invalid DNS label: %s", hostname)
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), job.Name, msg)}
}

// validateJobSpec validates the spec of a job: its fields and a selector
// that selects the pod template.
func validateJobSpec(spec *batchv1.JobSpec, fldPath *field.Path, allowInvalidLabelValue bool) field.ErrorList {
	errs := validateJobSpecFields(spec, fldPath)
	if spec.Selector == nil {
		errs = append(errs, field.Required(fldPath.Child("selector"), ""))
	} else {
		opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.Selector, opts, fldPath.Child("selector"))...)
	}
	selector, err := metav1.LabelSelectorAsSelector(spec.Selector)
	if err == nil && !selector.Matches(labels.Set(spec.Template.Labels)) {
		errs = append(errs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

// validateJobSpecFields validates a job spec but its selector, as for the
// job template of a cron job.
func validateJobSpecFields(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	errs := nonNegativePtr(spec.Parallelism, fldPath.Child("parallelism"))
	errs = append(errs, nonNegativePtr(spec.Completions, fldPath.Child("completions"))...)
	errs = append(errs, nonNegativePtr(spec.ActiveDeadlineSeconds, fldPath.Child("activeDeadlineSeconds"))...)
	errs = append(errs, nonNegativePtr(spec.BackoffLimit, fldPath.Child("backoffLimit"))...)
	errs = append(errs, nonNegativePtr(spec.TTLSecondsAfterFinished, fldPath.Child("ttlSecondsAfterFinished"))...)
	errs = append(errs, nonNegativePtr(spec.BackoffLimitPerIndex, fldPath.Child("backoffLimitPerIndex"))...)
	if spec.MaxFailedIndexes != nil {
		errs = append(errs, nonNegative(*spec.MaxFailedIndexes, fldPath.Child("maxFailedIndexes"))...)
		if spec.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(fldPath.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if spec.ManagedBy != nil {
		errs = append(errs, validation.IsDomainPrefixedPath(fldPath.Child("managedBy"), *spec.ManagedBy)...)
		if len(*spec.ManagedBy) > maxManagedByLength {
			errs = append(errs, field.TooLong(fldPath.Child("managedBy"), "", maxManagedByLength))
		}
	}
	errs = append(errs, validateCompletionMode(spec, fldPath)...)
	if spec.PodFailurePolicy != nil {
		errs = append(errs, validatePodFailurePolicy(spec, fldPath.Child("podFailurePolicy"))...)
	}
	if spec.SuccessPolicy != nil {
		if ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) != batchv1.IndexedCompletion {
			errs = append(errs, field.Invalid(fldPath.Child("successPolicy"), *spec.SuccessPolicy, "requires indexed completion mode"))
		} else {
			errs = append(errs, validateSuccessPolicy(spec, fldPath.Child("successPolicy"))...)
		}
	}
	errs = append(errs, validatePodReplacementPolicy(spec, fldPath.Child("podReplacementPolicy"))...)
	errs = append(errs, core.ValidatePodTemplateSpec(&spec.Template, fldPath.Child("template"))...)
	return append(errs, validateJobRestartPolicy(spec, fldPath.Child("template", "spec", "restartPolicy"))...)
}

// validateCompletionMode checks the completion mode and the limits of
// indexed jobs.
func validateCompletionMode(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	mode := spec.CompletionMode
	if mode != nil && *mode != batchv1.NonIndexedCompletion && *mode != batchv1.IndexedCompletion {
		errs = append(errs, field.NotSupported(fldPath.Child("completionMode"), mode,
			[]batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
	}
	if mode != nil && *mode == batchv1.IndexedCompletion {
		return append(errs, validateIndexedLimits(spec, fldPath)...)
	}
	if mode == nil || *mode == batchv1.NonIndexedCompletion {
		if spec.BackoffLimitPerIndex != nil {
			errs = append(errs, field.Invalid(fldPath.Child("backoffLimitPerIndex"), *spec.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
		if spec.MaxFailedIndexes != nil {
			errs = append(errs, field.Invalid(fldPath.Child("maxFailedIndexes"), *spec.MaxFailedIndexes, "requires indexed completion mode"))
		}
	}
	return errs
}

func validateIndexedLimits(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	parallelismPath, maxFailedPath := fldPath.Child("parallelism"), fldPath.Child("maxFailedIndexes")
	if spec.Completions == nil {
		errs = append(errs, field.Required(fldPath.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
	}
	if p := spec.Parallelism; p != nil && *p > maxParallelismForIndexedJob {
		errs = append(errs, field.Invalid(parallelismPath, *p, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
	}
	if m := spec.MaxFailedIndexes; m != nil && spec.Completions != nil && *m > *spec.Completions {
		errs = append(errs, field.Invalid(maxFailedPath, *m, "must be less than or equal to completions"))
	}
	if m := spec.MaxFailedIndexes; m != nil && *m > maxFailedIndexesForIndexedJob {
		errs = append(errs, field.Invalid(maxFailedPath, *m, fmt.Sprintf("must be less than or equal to %d", maxFailedIndexesForIndexedJob)))
	}
	if spec.Completions == nil || *spec.Completions <= completionsSoftLimit || spec.BackoffLimitPerIndex == nil {
		return errs
	}
	const highCompletions = "when completions are above %d and used with backoff limit per index"
	if spec.MaxFailedIndexes == nil {
		errs = append(errs, field.Required(maxFailedPath, fmt.Sprintf("must be specified when completions is above %d", completionsSoftLimit)))
	}
	if p := spec.Parallelism; p != nil && *p > parallelismLimitForHighCompletions {
		errs = append(errs, field.Invalid(parallelismPath, *p, fmt.Sprintf("must be less than or equal to %d "+highCompletions, parallelismLimitForHighCompletions, completionsSoftLimit)))
	}
	if m := spec.MaxFailedIndexes; m != nil && *m > maxFailedIndexesLimitForHighCompletions {
		errs = append(errs, field.Invalid(maxFailedPath, *m, fmt.Sprintf("must be less than or equal to %d "+highCompletions, maxFailedIndexesLimitForHighCompletions, completionsSoftLimit)))
	}
	return errs
}

// validateJobRestartPolicy requires OnFailure or Never, and Never with a pod
// failure policy. An empty policy counts as Always, its default.
func validateJobRestartPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	switch p := spec.Template.Spec.RestartPolicy; {
	case p == corev1.RestartPolicyAlways || p == "":
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever))}
	case p != corev1.RestartPolicyOnFailure && p != corev1.RestartPolicyNever:
		return field.ErrorList{field.NotSupported(fldPath, p, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever})}
	case spec.PodFailurePolicy != nil && p != corev1.RestartPolicyNever:
		return field.ErrorList{field.Invalid(fldPath, p, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever))}
	}
	return nil
}

// validateJobSpecUpdate validates the spec of an updated job: the rules of
// the spec, then what may not change.
func validateJobSpecUpdate(spec *batchv1.JobSpec, oldJob *batchv1.Job, fldPath *field.Path) field.ErrorList {
	old := &oldJob.Spec
	allowInvalid := metav1validation.LabelSelectorHasInvalidLabelValue(old.Selector)
	errs := validateJobSpec(spec, fldPath, allowInvalid)
	errs = append(errs, validateCompletionsUpdate(spec, old, fldPath.Child("completions"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(spec.Selector, old.Selector, fldPath.Child("selector"))...)
	errs = append(errs, validatePodTemplateUpdate(spec, oldJob, fldPath)...)
	for _, f := range []struct {
		name     string
		new, old any
	}{
		{"completionMode", spec.CompletionMode, old.CompletionMode},
		{"podFailurePolicy", spec.PodFailurePolicy, old.PodFailurePolicy},
		{"backoffLimitPerIndex", spec.BackoffLimitPerIndex, old.BackoffLimitPerIndex},
		{"managedBy", spec.ManagedBy, old.ManagedBy},
		{"successPolicy", spec.SuccessPolicy, old.SuccessPolicy},
	} {
		errs = append(errs, apivalidation.ValidateImmutableField(f.new, f.old, fldPath.Child(f.name))...)
	}
	return errs
}

// validateCompletionsUpdate: completions is immutable for non-indexed jobs;
// an indexed job may change it together with parallelism.
func validateCompletionsUpdate(spec, old *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	if ptr.Deref(spec.CompletionMode, "") != batchv1.IndexedCompletion {
		return apivalidation.ValidateImmutableField(spec.Completions, old.Completions, fldPath)
	}
	if apiequality.Semantic.DeepEqual(spec.Completions, old.Completions) || spec.Completions == nil {
		return nil
	}
	if *spec.Completions != ptr.Deref(spec.Parallelism, 0) {
		msg := fmt.Sprintf("can only be modified in tandem with %s", fldPath.Root().Child("parallelism"))
		return field.ErrorList{field.Invalid(fldPath, spec.Completions, msg)}
	}
	return nil
}

func nonNegative[T int32 | int64](v T, fldPath *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(int64(v), fldPath)
}

func nonNegativePtr[T int32 | int64](v *T, fldPath *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return nonNegative(*v, fldPath)
}
