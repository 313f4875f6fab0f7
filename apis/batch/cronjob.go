package batch

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// CronJobStrategy is the strategy of the cronjobs resource.
type CronJobStrategy struct {
	// Policy is --allow-privileged.
	Policy core.PodPolicy
}

var (
	_ registry.Strategy         = CronJobStrategy{}
	_ registry.Defaulter        = CronJobStrategy{}
	_ registry.WarningsOnCreate = CronJobStrategy{}
	_ registry.WarningsOnUpdate = CronJobStrategy{}
)

// NamespaceScoped is true.
func (CronJobStrategy) NamespaceScoped() bool { return true }

// Default applies kube's batch/v1 defaults: concurrent runs allowed, not
// suspended, three successful and one failed job kept. The job template
// gets the defaults of its pod failure policy and pod template only; the
// job defaults apply when the cron job controller creates a job.
func (CronJobStrategy) Default(obj runtime.Object) {
	spec := &obj.(*batchv1.CronJob).Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
	defaultPodFailurePolicy(spec.JobTemplate.Spec.PodFailurePolicy)
	core.DefaultPodTemplateSpec(&spec.JobTemplate.Spec.Template)
}

// PrepareForCreate clears the status, starts the generation at 1 and drops
// the disabled spec.jobTemplate.spec.scheduling.
func (CronJobStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	cj := obj.(*batchv1.CronJob)
	cj.Status = batchv1.CronJobStatus{}
	cj.Generation = 1
	dropScheduling(&cj.Spec.JobTemplate.Spec, nil)
}

// PrepareForUpdate keeps the status and bumps the generation when the spec
// changed.
func (CronJobStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	cj, oldCJ := obj.(*batchv1.CronJob), old.(*batchv1.CronJob)
	cj.Status = oldCJ.Status
	dropScheduling(&cj.Spec.JobTemplate.Spec, &oldCJ.Spec.JobTemplate.Spec)
	registry.CountSpecChange(cj, oldCJ, &cj.Spec, &oldCJ.Spec)
}

// Validate validates a new cron job.
func (s CronJobStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	cj := obj.(*batchv1.CronJob)
	return append(ValidateCronJob(cj), s.Policy.ValidateTemplate(&cj.Spec.JobTemplate.Spec.Template, jobTemplatePodTemplate)...)
}

// ValidateUpdate validates an update of the main resource.
func (s CronJobStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	cj := obj.(*batchv1.CronJob)
	return append(ValidateCronJobUpdate(cj, old.(*batchv1.CronJob)), s.Policy.ValidateTemplate(&cj.Spec.JobTemplate.Spec.Template, jobTemplatePodTemplate)...)
}

// jobTemplatePodTemplate is where a cron job keeps its pods' template.
var jobTemplatePodTemplate = field.NewPath("spec", "jobTemplate", "spec", "template")

// WarningsOnCreate warns about a name that is not a DNS label and about
// job template fields the job controller may not cope with.
func (CronJobStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	cj := obj.(*batchv1.CronJob)
	warnings := podNameWarnings(cj.Name)
	return append(warnings, jobSpecWarnings(field.NewPath("spec", "jobTemplate", "spec"), &cj.Spec.JobTemplate.Spec)...)
}

// WarningsOnUpdate repeats the job template warnings when the spec changed
// and warns about a time zone in the schedule.
func (CronJobStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	cj, oldCJ := obj.(*batchv1.CronJob), old.(*batchv1.CronJob)
	var warnings []string
	if cj.Generation != oldCJ.Generation {
		warnings = jobSpecWarnings(field.NewPath("spec", "jobTemplate", "spec"), &cj.Spec.JobTemplate.Spec)
	}
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		// kube names the path spec.spec.schedule in this message.
		warnings = append(warnings, fmt.Sprintf("cannot use TZ or CRON_TZ in %s, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
			field.NewPath("spec", "spec", "schedule")))
	}
	return warnings
}

// CronJobStatusStrategy is the strategy of cronjobs/status: an update
// changes the status only, which kube does not validate.
type CronJobStatusStrategy struct{ CronJobStrategy }

// PrepareForUpdate keeps the spec of old.
func (CronJobStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*batchv1.CronJob).Spec = old.(*batchv1.CronJob).Spec
}

// ValidateUpdate accepts any status.
func (CronJobStatusStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}

// WarningsOnUpdate has nothing to say about a status update.
func (CronJobStatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
