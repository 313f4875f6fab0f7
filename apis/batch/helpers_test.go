package batch

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/internal/fieldtest"
)

var ctx = context.Background()

// Table tests name expected errors by these short helpers.
type wantErr = fieldtest.Want

var (
	inv    = fieldtest.Invalid
	req    = fieldtest.Required
	forb   = fieldtest.Forbidden
	unsupp = fieldtest.NotSupported
	dup    = fieldtest.Duplicate
)

// checkErrs compares errors by type and path, ignoring order.
func checkErrs(t *testing.T, got field.ErrorList, want ...wantErr) {
	t.Helper()
	fieldtest.Check(t, got, want...)
}

// checkDetail requires an error at path whose detail contains detail.
func checkDetail(t *testing.T, got field.ErrorList, path, detail string) {
	t.Helper()
	for _, e := range got {
		if e.Field == path && strings.Contains(e.Detail, detail) {
			return
		}
	}
	t.Errorf("no error at %s with detail %q in %v", path, detail, got)
}

// podTemplate is a valid pod template of a job, not yet defaulted.
func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "pi"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "pi", Image: "registry.example/perl:5"}},
		},
	}
}

// newJob is a job as the Store creates it from a minimal request: defaulted
// and prepared, with its generated selector.
func newJob() *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns", UID: "uid-1"},
		Spec:       batchv1.JobSpec{Template: podTemplate()},
	}
	JobStrategy{}.Default(job)
	JobStrategy{}.PrepareForCreate(ctx, job)
	return job
}

// newCronJob is a valid, defaulted cron job.
func newCronJob() *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"},
		Spec: batchv1.CronJobSpec{
			Schedule:    "0 3 * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podTemplate()}},
		},
	}
	CronJobStrategy{}.Default(cj)
	return cj
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
