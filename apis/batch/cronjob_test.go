package batch

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestCronJobDefaults(t *testing.T) {
	cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
		PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
		}}},
	}}}}
	CronJobStrategy{}.Default(cj)
	s := cj.Spec
	if s.ConcurrencyPolicy != batchv1.AllowConcurrent || *s.Suspend || *s.SuccessfulJobsHistoryLimit != 3 || *s.FailedJobsHistoryLimit != 1 {
		t.Errorf("spec = %+v", s)
	}
	js := s.JobTemplate.Spec
	if js.PodFailurePolicy.Rules[0].OnPodConditions[0].Status != corev1.ConditionTrue {
		t.Errorf("pod failure policy not defaulted: %+v", js.PodFailurePolicy)
	}
	if js.Parallelism != nil || js.BackoffLimit != nil || js.CompletionMode != nil {
		t.Errorf("job defaults applied to the template: %+v", js)
	}

	set := &batchv1.CronJob{Spec: batchv1.CronJobSpec{ConcurrencyPolicy: batchv1.ForbidConcurrent, Suspend: ptr.To(true),
		SuccessfulJobsHistoryLimit: ptr.To[int32](0), FailedJobsHistoryLimit: ptr.To[int32](0)}}
	CronJobStrategy{}.Default(set)
	if set.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent || !*set.Spec.Suspend || *set.Spec.SuccessfulJobsHistoryLimit != 0 || *set.Spec.FailedJobsHistoryLimit != 0 {
		t.Errorf("defaults overrode set fields: %+v", set.Spec)
	}
}

func TestValidateCronJob(t *testing.T) {
	const tmpl = "spec.jobTemplate.spec."
	tests := []struct {
		name   string
		mutate func(*batchv1.CronJob)
		want   []wantErr
	}{
		{"valid", func(*batchv1.CronJob) {}, nil},
		{"descriptor", func(c *batchv1.CronJob) { c.Spec.Schedule = "@hourly" }, nil},
		{"time zone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("America/New_York") }, nil},
		{"no schedule", func(c *batchv1.CronJob) { c.Spec.Schedule = "" }, []wantErr{req("spec.schedule")}},
		{"bad schedule", func(c *batchv1.CronJob) { c.Spec.Schedule = "0 25 * * *" }, []wantErr{inv("spec.schedule")}},
		{"TZ in schedule", func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 3 * * *" }, []wantErr{inv("spec.schedule")}},
		{"empty time zone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("") }, []wantErr{inv("spec.timeZone")}},
		{"unknown time zone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("Mars/Olympus") }, []wantErr{inv("spec.timeZone")}},
		{"bad time zone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("../etc/passwd") }, []wantErr{inv("spec.timeZone")}},
		{"local time zone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("Local") }, []wantErr{inv("spec.timeZone")}},
		{"negative deadline", func(c *batchv1.CronJob) { c.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) },
			[]wantErr{inv("spec.startingDeadlineSeconds")}},
		{"no concurrency policy", func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = "" }, []wantErr{req("spec.concurrencyPolicy")}},
		{"bad concurrency policy", func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = "Queue" }, []wantErr{unsupp("spec.concurrencyPolicy")}},
		{"negative history", func(c *batchv1.CronJob) {
			c.Spec.SuccessfulJobsHistoryLimit, c.Spec.FailedJobsHistoryLimit = ptr.To[int32](-1), ptr.To[int32](-1)
		}, []wantErr{inv("spec.successfulJobsHistoryLimit"), inv("spec.failedJobsHistoryLimit")}},
		{"name too long", func(c *batchv1.CronJob) { c.Name = strings.Repeat("n", 53) }, []wantErr{inv("metadata.name")}},
		{"name at limit", func(c *batchv1.CronJob) { c.Name = strings.Repeat("n", 52) }, nil},
		{"template selector", func(c *batchv1.CronJob) { c.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{} },
			[]wantErr{inv(tmpl + "selector")}},
		{"template manual selector", func(c *batchv1.CronJob) { c.Spec.JobTemplate.Spec.ManualSelector = ptr.To(true) },
			[]wantErr{unsupp(tmpl + "manualSelector")}},
		{"template restart always", func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		},
			[]wantErr{req(tmpl + "template.spec.restartPolicy")}},
		{"template negative backoff", func(c *batchv1.CronJob) { c.Spec.JobTemplate.Spec.BackoffLimit = ptr.To[int32](-1) },
			[]wantErr{inv(tmpl + "backoffLimit")}},
		{"template invalid pod", func(c *batchv1.CronJob) { c.Spec.JobTemplate.Spec.Template.Spec.Containers = nil },
			[]wantErr{req(tmpl + "template.spec.containers")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cj := newCronJob()
			tt.mutate(cj)
			checkErrs(t, CronJobStrategy{}.Validate(ctx, cj), tt.want...)
		})
	}
	cj := newCronJob()
	cj.Spec.Schedule = "TZ=UTC 0 3 * * *"
	checkDetail(t, CronJobStrategy{}.Validate(ctx, cj), "spec.schedule", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead")
	cj.Spec.Schedule = "61 * * * *"
	checkDetail(t, CronJobStrategy{}.Validate(ctx, cj), "spec.schedule", "end of range (61) above maximum (59): 61")
}

func TestValidateCronJobUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*batchv1.CronJob)
		mutate func(*batchv1.CronJob)
		want   []wantErr
	}{
		{"long name kept", func(c *batchv1.CronJob) { c.Name = strings.Repeat("n", 60) }, func(*batchv1.CronJob) {}, nil},
		{"template changes", nil, func(c *batchv1.CronJob) { c.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = "x" }, nil},
		{"TZ kept", func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 3 * * *" }, func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 4 * * *" }, nil},
		{"TZ added", nil, func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 4 * * *" }, []wantErr{inv("spec.schedule")}},
		{"TZ and time zone", func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 3 * * *" },
			func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("UTC") }, []wantErr{inv("spec.schedule")}},
		{"unchanged unknown time zone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("Gone/Zone") },
			func(c *batchv1.CronJob) { c.Spec.Suspend = ptr.To(true) }, nil},
		{"new unknown time zone", nil, func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("Gone/Zone") }, []wantErr{inv("spec.timeZone")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := newCronJob()
			if tt.old != nil {
				tt.old(old)
			}
			cj := old.DeepCopy()
			tt.mutate(cj)
			checkErrs(t, CronJobStrategy{}.ValidateUpdate(ctx, cj, old), tt.want...)
		})
	}
}

func TestCronJobPrepareAndStatus(t *testing.T) {
	s := CronJobStrategy{}
	cj := newCronJob()
	cj.Generation, cj.Status.LastScheduleTime = 3, &t0
	cj.Spec.JobTemplate.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{}
	s.PrepareForCreate(ctx, cj)
	if cj.Generation != 1 || cj.Status.LastScheduleTime != nil || cj.Spec.JobTemplate.Spec.Scheduling != nil {
		t.Errorf("after create: %d %+v", cj.Generation, cj.Status)
	}
	old := newCronJob()
	old.Generation, old.Status.LastScheduleTime = 2, &t0
	cj = old.DeepCopy()
	cj.Status.LastScheduleTime = nil
	cj.Spec.Schedule = "@daily"
	s.PrepareForUpdate(ctx, cj, old)
	if cj.Generation != 3 || cj.Status.LastScheduleTime == nil {
		t.Errorf("after update: %d %+v", cj.Generation, cj.Status)
	}

	st := CronJobStatusStrategy{}
	cj = old.DeepCopy()
	cj.Spec.Schedule = "@daily"
	cj.Status.LastScheduleTime = &t1
	st.PrepareForUpdate(ctx, cj, old)
	if cj.Spec.Schedule != old.Spec.Schedule || cj.Status.LastScheduleTime != &t1 {
		t.Errorf("status update: %+v", cj)
	}
	checkErrs(t, st.ValidateUpdate(ctx, cj, old))
}

func TestCronJobWarnings(t *testing.T) {
	cj := newCronJob()
	if w := (CronJobStrategy{}).WarningsOnCreate(ctx, cj); len(w) != 0 {
		t.Errorf("warnings = %v", w)
	}
	cj.Name = "Nightly"
	if w := (CronJobStrategy{}).WarningsOnCreate(ctx, cj); len(w) != 1 {
		t.Errorf("warnings = %v", w)
	}
	cj.Spec.Schedule = "TZ=UTC 0 3 * * *"
	w := CronJobStrategy{}.WarningsOnUpdate(ctx, cj, cj)
	if len(w) != 1 || !strings.Contains(w[0], "cannot use TZ or CRON_TZ in spec.spec.schedule") {
		t.Errorf("warnings = %v", w)
	}
}
