package batch

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// statusChecks are the job status rules to apply to one update. Most apply
// only when the fields they read changed, so that a job whose status broke a
// rule before it existed, or right after a spec change, can still be
// updated. They are kube's, with JobManagedBy on (it is GA in 1.37).
type statusChecks struct {
	decreasingSucceeded, decreasingFailed, disablingTerminal                     bool
	invalidCompleted, invalidFailed, completedForNonIndexed, failedWithoutPerIdx bool
	failedOverlapsCompleted, failedWithoutFailureTarget, completeWithoutCriteria bool
	finishedWithActive, finishedWithoutStart, finishedWithUncounted              bool
	startTimeUpdate, completionBeforeStart, mutatingCompletionTime               bool
	completeWithoutCompletionTime, completionTimeWithoutComplete                 bool
	completeAndFailed, completeAndFailureTarget, moreReadyThanActive             bool
	finishedWithTerminating                                                      bool
}

// statusChecksFor decides which rules apply to the status update from old
// to job.
func statusChecksFor(job, old *batchv1.Job) statusChecks {
	s, o := &job.Status, &old.Status
	changed := func(c batchv1.JobConditionType) bool {
		return isConditionTrue(o.Conditions, c) != isConditionTrue(s.Conditions, c)
	}
	finishedChanged := isFinished(old) != isFinished(job)
	completeChanged, failedChanged := changed(batchv1.JobComplete), changed(batchv1.JobFailed)
	completedChanged := o.CompletedIndexes != s.CompletedIndexes
	failedIdxChanged := !ptr.Equal(o.FailedIndexes, s.FailedIndexes)
	activeChanged := o.Active != s.Active
	startChanged := !ptr.Equal(o.StartTime, s.StartTime)
	completionChanged := !ptr.Equal(o.CompletionTime, s.CompletionTime)
	indexed := ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	suspendedWithoutCompletions := ptr.Deref(job.Spec.Suspend, false) && ptr.Equal(job.Spec.Completions, ptr.To[int32](0))
	resuming := isConditionTrue(o.Conditions, batchv1.JobSuspended) && hasCondition(s.Conditions, batchv1.JobSuspended, corev1.ConditionFalse)
	return statusChecks{
		// An indexed job with parallelism equal to completions may be
		// scaled down, and lose succeeded pods.
		decreasingSucceeded:           !indexed || !ptr.Equal(job.Spec.Completions, job.Spec.Parallelism),
		decreasingFailed:              true,
		disablingTerminal:             true,
		invalidCompleted:              completedChanged,
		invalidFailed:                 failedIdxChanged,
		completedForNonIndexed:        completedChanged,
		failedWithoutPerIdx:           failedIdxChanged,
		failedOverlapsCompleted:       failedIdxChanged || completedChanged,
		failedWithoutFailureTarget:    failedChanged || failedIdxChanged,
		completeWithoutCriteria:       completeChanged || changed(batchv1.JobSuccessCriteriaMet),
		finishedWithActive:            finishedChanged || activeChanged,
		finishedWithoutStart:          (finishedChanged || startChanged) && !suspendedWithoutCompletions,
		finishedWithUncounted:         finishedChanged || !apiequality.Semantic.DeepEqual(o.UncountedTerminatedPods, s.UncountedTerminatedPods),
		startTimeUpdate:               startChanged && !resuming,
		completionBeforeStart:         startChanged || completionChanged,
		mutatingCompletionTime:        true,
		completionTimeWithoutComplete: completeChanged || completionChanged,
		completeWithoutCompletionTime: completeChanged || completionChanged,
		completeAndFailed:             completeChanged || failedChanged,
		completeAndFailureTarget:      completeChanged || changed(batchv1.JobFailureTarget),
		moreReadyThanActive:           !ptr.Equal(o.Ready, s.Ready) || activeChanged,
		finishedWithTerminating:       finishedChanged || !ptr.Equal(o.Terminating, s.Terminating),
	}
}

// ValidateJobStatusUpdate validates the status of an updated job and its
// transition from the old one.
func ValidateJobStatusUpdate(job, old *batchv1.Job) field.ErrorList {
	checks := statusChecksFor(job, old)
	fldPath := field.NewPath("status")
	errs := validateJobStatusCounts(&job.Status, fldPath)
	errs = append(errs, validateJobStatusConditions(job, checks, fldPath)...)
	errs = append(errs, validateJobStatusIndexes(job, checks, fldPath)...)
	errs = append(errs, validateJobStatusOutcome(job, checks, fldPath)...)
	return append(errs, validateJobStatusTransition(job, old, checks, fldPath)...)
}

func validateJobStatusCounts(s *batchv1.JobStatus, fldPath *field.Path) field.ErrorList {
	errs := nonNegative(s.Active, fldPath.Child("active"))
	errs = append(errs, nonNegative(s.Succeeded, fldPath.Child("succeeded"))...)
	errs = append(errs, nonNegative(s.Failed, fldPath.Child("failed"))...)
	errs = append(errs, nonNegativePtr(s.Ready, fldPath.Child("ready"))...)
	errs = append(errs, nonNegativePtr(s.Terminating, fldPath.Child("terminating"))...)
	if u := s.UncountedTerminatedPods; u != nil {
		path := fldPath.Child("uncountedTerminatedPods")
		seen := map[types.UID]bool{}
		for _, list := range []struct {
			name string
			uids []types.UID
		}{{"succeeded", u.Succeeded}, {"failed", u.Failed}} {
			for i, uid := range list.uids {
				p := path.Child(list.name).Index(i)
				switch {
				case uid == "":
					errs = append(errs, field.Invalid(p, uid, "must not be empty"))
				case seen[uid]:
					errs = append(errs, field.Duplicate(p, uid))
				default:
					seen[uid] = true
				}
			}
		}
	}
	return errs
}

// validateJobStatusConditions checks that the conditions, times and active
// pods of a job agree with each other.
func validateJobStatusConditions(job *batchv1.Job, c statusChecks, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	s := &job.Status
	conds := fldPath.Child("conditions")
	complete, failed := isConditionTrue(s.Conditions, batchv1.JobComplete), isConditionTrue(s.Conditions, batchv1.JobFailed)
	failureTarget := isConditionTrue(s.Conditions, batchv1.JobFailureTarget)
	criteriaMet := isConditionTrue(s.Conditions, batchv1.JobSuccessCriteriaMet)
	finished := complete || failed
	add := func(check, bad bool, err *field.Error) {
		if check && bad {
			errs = append(errs, err)
		}
	}
	add(c.completeAndFailed, complete && failed, field.Invalid(conds, field.OmitValueType{}, "cannot set Complete=True and Failed=true conditions"))
	add(c.completeAndFailureTarget, complete && failureTarget, field.Invalid(conds, field.OmitValueType{}, "cannot set Complete=True and FailureTarget=true conditions"))
	add(c.completionTimeWithoutComplete, s.CompletionTime != nil && !complete,
		field.Invalid(fldPath.Child("completionTime"), s.CompletionTime, "cannot set completionTime when there is no Complete=True condition"))
	add(c.completeWithoutCompletionTime, s.CompletionTime == nil && complete,
		field.Required(fldPath.Child("completionTime"), "completionTime is required for Complete jobs"))
	add(c.completionBeforeStart, s.StartTime != nil && s.CompletionTime != nil && s.CompletionTime.Before(s.StartTime),
		field.Invalid(fldPath.Child("completionTime"), s.CompletionTime, "must be equal to or after `startTime`"))
	add(c.failedWithoutFailureTarget, failed && !failureTarget,
		field.Invalid(conds, field.OmitValueType{}, "cannot set Failed=True condition without the FailureTarget=true condition"))
	add(c.completeWithoutCriteria, complete && !criteriaMet,
		field.Invalid(conds, field.OmitValueType{}, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition"))
	add(c.finishedWithActive, s.Active > 0 && finished, field.Invalid(fldPath.Child("active"), s.Active, "active>0 is invalid for finished job"))
	add(c.finishedWithoutStart, s.StartTime == nil && finished, field.Required(fldPath.Child("startTime"), "startTime is required for finished job"))
	u := s.UncountedTerminatedPods
	add(c.finishedWithUncounted, finished && u != nil && len(u.Failed)+len(u.Succeeded) > 0,
		field.Invalid(fldPath.Child("uncountedTerminatedPods"), u, "must be empty for finished job"))
	return errs
}

// validateJobStatusOutcome checks the pods counted by a finished job and the
// conditions of success against those of failure.
func validateJobStatusOutcome(job *batchv1.Job, c statusChecks, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	s := &job.Status
	conds := fldPath.Child("conditions")
	complete, failed := isConditionTrue(s.Conditions, batchv1.JobComplete), isConditionTrue(s.Conditions, batchv1.JobFailed)
	criteriaMet := isConditionTrue(s.Conditions, batchv1.JobSuccessCriteriaMet)
	if c.finishedWithTerminating && ptr.Deref(s.Terminating, 0) > 0 && (complete || failed) {
		errs = append(errs, field.Invalid(fldPath.Child("terminating"), s.Terminating, "terminating>0 is invalid for finished job"))
	}
	if c.moreReadyThanActive && s.Ready != nil && *s.Ready > s.Active {
		errs = append(errs, field.Invalid(fldPath.Child("ready"), *s.Ready, "cannot set more ready pods than active"))
	}
	if criteriaMet && failed {
		errs = append(errs, field.Invalid(conds, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if criteriaMet && isConditionTrue(s.Conditions, batchv1.JobFailureTarget) {
		errs = append(errs, field.Invalid(conds, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if job.Spec.SuccessPolicy != nil && !criteriaMet && complete {
		errs = append(errs, field.Invalid(conds, field.OmitValueType{}, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}
	return errs
}

// validateJobStatusIndexes checks completedIndexes and failedIndexes.
func validateJobStatusIndexes(job *batchv1.Job, c statusChecks, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	s, spec := &job.Status, &job.Spec
	completedPath, failedPath := fldPath.Child("completedIndexes"), fldPath.Child("failedIndexes")
	if c.invalidCompleted && spec.Completions != nil {
		if _, err := validateIndexesFormat(s.CompletedIndexes, *spec.Completions); err != nil {
			errs = append(errs, field.Invalid(completedPath, s.CompletedIndexes, fmt.Sprintf("error parsing completedIndexes: %s", err)))
		}
	}
	if c.invalidFailed && spec.Completions != nil && spec.BackoffLimitPerIndex != nil && s.FailedIndexes != nil {
		if _, err := validateIndexesFormat(*s.FailedIndexes, *spec.Completions); err != nil {
			errs = append(errs, field.Invalid(failedPath, s.FailedIndexes, fmt.Sprintf("error parsing failedIndexes: %s", err)))
		}
	}
	indexed := ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion
	if c.completedForNonIndexed && s.CompletedIndexes != "" && !indexed {
		errs = append(errs, field.Invalid(completedPath, s.CompletedIndexes, "cannot set non-empty completedIndexes when non-indexed completion mode"))
	}
	if c.failedWithoutPerIdx && spec.BackoffLimitPerIndex == nil && s.FailedIndexes != nil {
		errs = append(errs, field.Invalid(failedPath, *s.FailedIndexes, "cannot set non-null failedIndexes when backoffLimitPerIndex is null"))
	}
	if c.failedOverlapsCompleted && spec.Completions != nil && s.FailedIndexes != nil {
		if err := indexesOverlap(s.CompletedIndexes, *s.FailedIndexes, *spec.Completions); err != nil {
			errs = append(errs, field.Invalid(failedPath, *s.FailedIndexes, err.Error()))
		}
	}
	return errs
}

// validateJobStatusTransition checks what may not go back: terminal
// conditions, counters, completion and start times.
func validateJobStatusTransition(job, old *batchv1.Job, c statusChecks, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	s, o := &job.Status, &old.Status
	conds := fldPath.Child("conditions")
	if c.disablingTerminal {
		for _, t := range []batchv1.JobConditionType{batchv1.JobFailed, batchv1.JobComplete, batchv1.JobFailureTarget} {
			if isConditionTrue(o.Conditions, t) && !isConditionTrue(s.Conditions, t) {
				errs = append(errs, field.Invalid(conds, field.OmitValueType{}, fmt.Sprintf("cannot disable the terminal %s=True condition", t)))
			}
		}
	}
	if c.decreasingFailed && s.Failed < o.Failed {
		errs = append(errs, field.Invalid(fldPath.Child("failed"), s.Failed, "cannot decrease the failed counter"))
	}
	if c.decreasingSucceeded && s.Succeeded < o.Succeeded {
		errs = append(errs, field.Invalid(fldPath.Child("succeeded"), s.Succeeded, "cannot decrease the succeeded counter"))
	}
	if c.mutatingCompletionTime && s.CompletionTime != nil && o.CompletionTime != nil && !ptr.Equal(s.CompletionTime, o.CompletionTime) {
		errs = append(errs, field.Invalid(fldPath.Child("completionTime"), s.CompletionTime, "field is immutable"))
	}
	if c.startTimeUpdate && o.StartTime != nil && !ptr.Equal(o.StartTime, s.StartTime) && !ptr.Deref(job.Spec.Suspend, false) {
		errs = append(errs, field.Invalid(fldPath.Child("startTime"), s.StartTime, "field is immutable for unsuspended job once set"))
	}
	criteriaMet, oldCriteriaMet := isConditionTrue(s.Conditions, batchv1.JobSuccessCriteriaMet), isConditionTrue(o.Conditions, batchv1.JobSuccessCriteriaMet)
	if oldCriteriaMet && !criteriaMet {
		errs = append(errs, field.Invalid(conds, field.OmitValueType{}, "cannot disable the SuccessCriteriaMet=True condition"))
	}
	if isConditionTrue(o.Conditions, batchv1.JobComplete) && !oldCriteriaMet && criteriaMet {
		errs = append(errs, field.Invalid(conds, field.OmitValueType{}, "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"))
	}
	return errs
}

func isFinished(job *batchv1.Job) bool {
	return isConditionTrue(job.Status.Conditions, batchv1.JobComplete) || isConditionTrue(job.Status.Conditions, batchv1.JobFailed)
}

func isConditionTrue(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	return hasCondition(conds, t, corev1.ConditionTrue)
}

func hasCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType, status corev1.ConditionStatus) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == status {
			return true
		}
	}
	return false
}
