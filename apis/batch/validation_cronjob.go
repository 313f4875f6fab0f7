package batch

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// maxCronJobNameLength leaves room in a 63-character job name for the
// 11-character suffix the cron job controller appends.
const maxCronJobNameLength = 63 - 11

// ValidateCronJob validates a new cron job: its spec and the length of its
// name.
func ValidateCronJob(cj *batchv1.CronJob) field.ErrorList {
	errs := validateCronJobSpec(&cj.Spec, nil, field.NewPath("spec"))
	if len(cj.Name) > maxCronJobNameLength {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, "must be no more than 52 characters"))
	}
	return append(errs, requireSchedule(&cj.Spec, field.NewPath("spec"))...)
}

// requireSchedule is kube's declarative check of a schedule: its error
// comes after the others.
func requireSchedule(spec *batchv1.CronJobSpec, fldPath *field.Path) field.ErrorList {
	if spec.Schedule == "" {
		return field.ErrorList{field.Required(fldPath.Child("schedule"), "")}
	}
	return nil
}

// ValidateCronJobUpdate validates an updated cron job. The name length is
// not checked, so that cron jobs created before the limit can be updated.
func ValidateCronJobUpdate(cj, old *batchv1.CronJob) field.ErrorList {
	errs := validateCronJobSpec(&cj.Spec, &old.Spec, field.NewPath("spec"))
	return append(errs, requireSchedule(&cj.Spec, field.NewPath("spec"))...)
}

// validateCronJobSpec validates a cron job spec; old is nil on create.
func validateCronJobSpec(spec, old *batchv1.CronJobSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Schedule != "" {
		// A time zone in the schedule is tolerated only where it already was.
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		errs = append(errs, validateSchedule(spec.Schedule, allowTZ, spec.TimeZone, fldPath.Child("schedule"))...)
	}
	errs = append(errs, nonNegativePtr(spec.StartingDeadlineSeconds, fldPath.Child("startingDeadlineSeconds"))...)
	if old == nil || !ptr.Equal(old.TimeZone, spec.TimeZone) {
		errs = append(errs, validateTimeZone(spec.TimeZone, fldPath.Child("timeZone"))...)
	}
	errs = append(errs, validateConcurrencyPolicy(spec.ConcurrencyPolicy, fldPath.Child("concurrencyPolicy"))...)
	errs = append(errs, validateJobTemplateSpec(&spec.JobTemplate, fldPath.Child("jobTemplate"))...)
	errs = append(errs, nonNegativePtr(spec.SuccessfulJobsHistoryLimit, fldPath.Child("successfulJobsHistoryLimit"))...)
	return append(errs, nonNegativePtr(spec.FailedJobsHistoryLimit, fldPath.Child("failedJobsHistoryLimit"))...)
}

func validateSchedule(schedule string, allowTZ bool, timeZone *string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := parseSchedule(schedule); err != nil {
		errs = append(errs, field.Invalid(fldPath, schedule, err.Error()))
	}
	hasTZ := strings.Contains(schedule, "TZ")
	switch {
	case allowTZ && hasTZ && timeZone != nil:
		errs = append(errs, field.Invalid(fldPath, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && hasTZ:
		errs = append(errs, field.Invalid(fldPath, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

// timeZonePart is one component of an IANA time zone name; digits and +
// are tolerated for legacy names.
var timeZonePart = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// validateTimeZone requires an explicit IANA time zone the server knows.
func validateTimeZone(tz *string, fldPath *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(fldPath, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !timeZonePart.MatchString(part) {
			return field.ErrorList{field.Invalid(fldPath, tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	var errs field.ErrorList
	if strings.EqualFold(*tz, "Local") {
		errs = append(errs, field.Invalid(fldPath, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		errs = append(errs, field.Invalid(fldPath, tz, err.Error()))
	}
	return errs
}

func validateConcurrencyPolicy(p batchv1.ConcurrencyPolicy, fldPath *field.Path) field.ErrorList {
	switch p {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	valid := []batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent}
	return field.ErrorList{field.NotSupported(fldPath, p, valid)}
}

// validateJobTemplateSpec validates the job template of a cron job: the job
// spec rules, and no selector, which the controller generates.
func validateJobTemplateSpec(t *batchv1.JobTemplateSpec, fldPath *field.Path) field.ErrorList {
	specPath := fldPath.Child("spec")
	errs := validateJobSpecFields(&t.Spec, specPath)
	if t.Spec.Selector != nil {
		errs = append(errs, field.Invalid(specPath.Child("selector"), t.Spec.Selector, "`selector` will be auto-generated"))
	}
	if ptr.Deref(t.Spec.ManualSelector, false) {
		errs = append(errs, field.NotSupported(specPath.Child("manualSelector"), t.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return errs
}
