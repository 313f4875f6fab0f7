package printers

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/capstan-io/capstan/registry/rest"
)

var batchConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	batchv1.SchemeGroupVersion.WithKind("Job"):     New(jobColumns, jobRow),
	batchv1.SchemeGroupVersion.WithKind("CronJob"): New(cronJobColumns, cronJobRow),
}

var jobColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Status", "string", "Status of the job."),
	column("Completions", "string", batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
	column("Duration", "string", "Time required to complete the job."),
	ageColumn(),
	wideColumn("Containers", "string", containersDoc),
	wideColumn("Images", "string", imagesDoc),
	wideColumn("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]),
}

func jobRow(j *batchv1.Job, now time.Time) (metav1.TableRow, error) {
	var completions string
	switch parallelism := deref(j.Spec.Parallelism); {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, parallelism)
	default:
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}
	var took string
	switch start, end := j.Status.StartTime, j.Status.CompletionTime; {
	case start == nil:
	case end == nil:
		took = duration.HumanDuration(now.Sub(start.Time))
	default:
		took = duration.HumanDuration(end.Sub(start.Time))
	}
	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return rowOf(j.Name, jobStatus(j), completions, took, since(j.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(j.Spec.Selector))
}

// jobStatus is the job's most telling true condition, or Terminating or
// Running.
func jobStatus(j *batchv1.Job) string {
	switch {
	case jobCondition(j, batchv1.JobComplete):
		return "Complete"
	case jobCondition(j, batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case jobCondition(j, batchv1.JobSuspended):
		return "Suspended"
	case jobCondition(j, batchv1.JobFailureTarget):
		return "FailureTarget"
	case jobCondition(j, batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

// jobCondition tells whether the job's first condition of a type is true.
func jobCondition(j *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var cronJobColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Schedule", "string", batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]),
	column("Timezone", "string", batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]),
	column("Suspend", "boolean", batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]),
	column("Active", "integer", batchv1.CronJobStatus{}.SwaggerDoc()["active"]),
	column("Last Schedule", "string", batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]),
	ageColumn(),
	wideColumn("Containers", "string", containersDoc),
	wideColumn("Images", "string", imagesDoc),
	wideColumn("Selector", "string", batchv1.JobSpec{}.SwaggerDoc()["selector"]),
}

func cronJobRow(cj *batchv1.CronJob, now time.Time) (metav1.TableRow, error) {
	last := "<none>"
	if t := cj.Status.LastScheduleTime; t != nil {
		last = since(*t, now)
	}
	tz := "<none>"
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
	}
	job := cj.Spec.JobTemplate.Spec
	names, images := containerCells(job.Template.Spec.Containers)
	return rowOf(cj.Name, cj.Spec.Schedule, tz, boolPtr(cj.Spec.Suspend), int64(len(cj.Status.Active)), last,
		since(cj.CreationTimestamp, now), names, images, metav1.FormatLabelSelector(job.Selector))
}
