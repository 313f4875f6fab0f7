package batch

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func conds(types ...batchv1.JobConditionType) []batchv1.JobCondition {
	var cs []batchv1.JobCondition
	for _, t := range types {
		cs = append(cs, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue})
	}
	return cs
}

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

// runningJob is a started job with one active pod.
func runningJob() *batchv1.Job {
	job := newJob()
	job.Status = batchv1.JobStatus{StartTime: &t0, Active: 1, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0)}
	return job
}

func indexedJob(j *batchv1.Job) {
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](4), ptr.To[int32](2)
}

func TestValidateJobStatusUpdate(t *testing.T) {
	complete := func(s *batchv1.JobStatus) {
		s.Active, s.Succeeded, s.CompletionTime = 0, 1, &t1
		s.Conditions = conds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
	}
	tests := []struct {
		name   string
		old    func(*batchv1.Job)
		status func(*batchv1.JobStatus)
		want   []wantErr
	}{
		{"ready", nil, func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](1) }, nil},
		{"more ready than active", nil, func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](2) }, []wantErr{inv("status.ready")}},
		{"negative", nil, func(s *batchv1.JobStatus) {
			s.Active, s.Terminating, s.Ready = -1, ptr.To[int32](-1), ptr.To[int32](-2)
		}, []wantErr{inv("status.active"), inv("status.terminating"), inv("status.ready")}},
		{"uncounted", nil, func(s *batchv1.JobStatus) {
			s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"a", ""}, Failed: []types.UID{"a"}}
		}, []wantErr{inv("status.uncountedTerminatedPods.succeeded[1]"), dup("status.uncountedTerminatedPods.failed[0]")}},
		{"complete", nil, complete, nil},
		{"complete without criteria", nil, func(s *batchv1.JobStatus) { complete(s); s.Conditions = conds(batchv1.JobComplete) },
			[]wantErr{inv("status.conditions")}},
		{"complete without time", nil, func(s *batchv1.JobStatus) { complete(s); s.CompletionTime = nil }, []wantErr{req("status.completionTime")}},
		{"completion time too early", nil, func(s *batchv1.JobStatus) { complete(s); s.StartTime = &t1; s.CompletionTime = &t0 },
			[]wantErr{inv("status.completionTime"), inv("status.startTime")}},
		{"completion time without complete", nil, func(s *batchv1.JobStatus) { s.CompletionTime = &t1 }, []wantErr{inv("status.completionTime")}},
		{"complete with active", nil, func(s *batchv1.JobStatus) { complete(s); s.Active = 1 }, []wantErr{inv("status.active")}},
		{"complete and failed", nil, func(s *batchv1.JobStatus) {
			complete(s)
			s.Conditions = conds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete, batchv1.JobFailureTarget, batchv1.JobFailed)
		}, []wantErr{inv("status.conditions"), inv("status.conditions"), inv("status.conditions"), inv("status.conditions")}},
		{"failed", nil, func(s *batchv1.JobStatus) {
			s.Active = 0
			s.Conditions = conds(batchv1.JobFailureTarget, batchv1.JobFailed)
		}, nil},
		{"failed without target", nil, func(s *batchv1.JobStatus) { s.Active = 0; s.Conditions = conds(batchv1.JobFailed) },
			[]wantErr{inv("status.conditions")}},
		{"finished without start", func(j *batchv1.Job) { j.Status = batchv1.JobStatus{} }, func(s *batchv1.JobStatus) {
			s.Conditions = conds(batchv1.JobFailureTarget, batchv1.JobFailed)
		}, []wantErr{req("status.startTime")}},
		{"suspended empty job finishes unstarted", func(j *batchv1.Job) {
			j.Status = batchv1.JobStatus{}
			j.Spec.Suspend, j.Spec.Completions = ptr.To(true), ptr.To[int32](0)
		}, func(s *batchv1.JobStatus) {
			s.CompletionTime = &t1
			s.Conditions = conds(batchv1.JobSuccessCriteriaMet, batchv1.JobComplete)
		}, nil},
		{"finished with uncounted", nil, func(s *batchv1.JobStatus) {
			s.Active = 0
			s.Conditions = conds(batchv1.JobFailureTarget, batchv1.JobFailed)
			s.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Failed: []types.UID{"a"}}
		}, []wantErr{inv("status.uncountedTerminatedPods")}},
		{"finished with terminating", nil, func(s *batchv1.JobStatus) {
			s.Active, s.Terminating = 0, ptr.To[int32](1)
			s.Conditions = conds(batchv1.JobFailureTarget, batchv1.JobFailed)
		}, []wantErr{inv("status.terminating")}},
		{"terminal condition dropped", func(j *batchv1.Job) { j.Status.Active = 0; j.Status.Conditions = conds(batchv1.JobFailureTarget) },
			func(s *batchv1.JobStatus) { s.Conditions = nil }, []wantErr{inv("status.conditions")}},
		{"counters decreased", func(j *batchv1.Job) { j.Status.Failed, j.Status.Succeeded = 2, 2 },
			func(s *batchv1.JobStatus) { s.Failed, s.Succeeded = 1, 1 }, []wantErr{inv("status.failed"), inv("status.succeeded")}},
		{"indexed scaled down", func(j *batchv1.Job) { indexedJob(j); j.Spec.Parallelism = ptr.To[int32](4); j.Status.Succeeded = 2 },
			func(s *batchv1.JobStatus) { s.Succeeded = 1 }, nil},
		{"completion time changed", func(j *batchv1.Job) { complete(&j.Status) }, func(s *batchv1.JobStatus) { s.CompletionTime = &metav1.Time{Time: t1.Add(1)} },
			[]wantErr{inv("status.completionTime")}},
		{"start time changed", nil, func(s *batchv1.JobStatus) { s.StartTime = &t1 }, []wantErr{inv("status.startTime")}},
		{"start time of suspended job", func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }, func(s *batchv1.JobStatus) { s.StartTime = &t1 }, nil},
		{"start time on resume", func(j *batchv1.Job) { j.Status.Conditions = conds(batchv1.JobSuspended) }, func(s *batchv1.JobStatus) {
			s.StartTime = &t1
			s.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse}}
		}, nil},
		{"criteria met dropped", func(j *batchv1.Job) { j.Status.Conditions = conds(batchv1.JobSuccessCriteriaMet) },
			func(s *batchv1.JobStatus) { s.Conditions = nil }, []wantErr{inv("status.conditions")}},
		{"completed indexes", indexedJob, func(s *batchv1.JobStatus) { s.CompletedIndexes = "0,2-3" }, nil},
		{"bad completed indexes", indexedJob, func(s *batchv1.JobStatus) { s.CompletedIndexes = "2,1" }, []wantErr{inv("status.completedIndexes")}},
		{"completed indexes of non-indexed job", nil, func(s *batchv1.JobStatus) { s.CompletedIndexes = "0" }, []wantErr{inv("status.completedIndexes")}},
		{"failed indexes without per index", indexedJob, func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("1") },
			[]wantErr{inv("status.failedIndexes")}},
		{"failed indexes overlap", func(j *batchv1.Job) { indexedJob(j); j.Spec.BackoffLimitPerIndex = ptr.To[int32](1) },
			func(s *batchv1.JobStatus) { s.CompletedIndexes, s.FailedIndexes = "0-2", ptr.To("2-3") }, []wantErr{inv("status.failedIndexes")}},
		{"old violation tolerated", func(j *batchv1.Job) { j.Status.Ready = ptr.To[int32](3) }, func(s *batchv1.JobStatus) { s.Succeeded = 1 }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := runningJob()
			if tt.old != nil {
				tt.old(old)
			}
			job := old.DeepCopy()
			tt.status(&job.Status)
			checkErrs(t, JobStatusStrategy{}.ValidateUpdate(ctx, job, old), tt.want...)
		})
	}
}

func TestIndexes(t *testing.T) {
	tests := []struct {
		indexes string
		total   int32
		err     string
	}{
		{"", 0, ""},
		{"0", 1, ""},
		{"0,2-4,9", 5, ""},
		{"1-1", 0, "non-increasing order, previous: 1, current: 1"},
		{"3,2", 0, "non-increasing order, previous: 3, current: 2"},
		{"1-2-3", 0, `the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by '-'`},
		{"a", 0, `cannot convert string to integer for index: "a"`},
		{"10", 0, `too large index: "10"`},
	}
	for _, tt := range tests {
		total, err := validateIndexesFormat(tt.indexes, 10)
		if total != tt.total || (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("%q: %d, %v; want %d, %q", tt.indexes, total, err, tt.total, tt.err)
		}
	}
	if err := indexesOverlap("0-3,x,8", "4-5,8", 10); err == nil || err.Error() != "failedIndexes and completedIndexes overlap at index: 8" {
		t.Errorf("overlap = %v", err)
	}
	if err := indexesOverlap("0-3", "4-5", 10); err != nil {
		t.Errorf("overlap = %v", err)
	}
}
