package batch

import (
	"math"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestJobDefaults(t *testing.T) {
	tests := []struct {
		name                                   string
		spec                                   batchv1.JobSpec
		completions, parallelism, backoffLimit *int32
		replacement                            batchv1.PodReplacementPolicy
	}{
		{"empty", batchv1.JobSpec{}, ptr.To[int32](1), ptr.To[int32](1), ptr.To[int32](6), batchv1.TerminatingOrFailed},
		{"completions", batchv1.JobSpec{Completions: ptr.To[int32](5)}, ptr.To[int32](5), ptr.To[int32](1), ptr.To[int32](6), batchv1.TerminatingOrFailed},
		{"parallelism", batchv1.JobSpec{Parallelism: ptr.To[int32](3)}, nil, ptr.To[int32](3), ptr.To[int32](6), batchv1.TerminatingOrFailed},
		{"backoff per index", batchv1.JobSpec{BackoffLimitPerIndex: ptr.To[int32](1)},
			ptr.To[int32](1), ptr.To[int32](1), ptr.To[int32](math.MaxInt32), batchv1.TerminatingOrFailed},
		{"pod failure policy", batchv1.JobSpec{PodFailurePolicy: &batchv1.PodFailurePolicy{}},
			ptr.To[int32](1), ptr.To[int32](1), ptr.To[int32](6), batchv1.Failed},
		{"set", batchv1.JobSpec{Completions: ptr.To[int32](0), Parallelism: ptr.To[int32](0), BackoffLimit: ptr.To[int32](0),
			PodReplacementPolicy: ptr.To(batchv1.Failed)}, ptr.To[int32](0), ptr.To[int32](0), ptr.To[int32](0), batchv1.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := &batchv1.Job{Spec: tt.spec}
			JobStrategy{}.Default(job)
			s := job.Spec
			if !ptr.Equal(s.Completions, tt.completions) || !ptr.Equal(s.Parallelism, tt.parallelism) || !ptr.Equal(s.BackoffLimit, tt.backoffLimit) ||
				*s.PodReplacementPolicy != tt.replacement || *s.CompletionMode != batchv1.NonIndexedCompletion || *s.Suspend || *s.ManualSelector {
				t.Errorf("spec = %+v", s)
			}
		})
	}

	job := &batchv1.Job{Spec: batchv1.JobSpec{PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}, {Type: "X", Status: corev1.ConditionFalse}},
	}}}}}
	JobStrategy{}.Default(job)
	if p := job.Spec.PodFailurePolicy.Rules[0].OnPodConditions; p[0].Status != corev1.ConditionTrue || p[1].Status != corev1.ConditionFalse {
		t.Errorf("patterns = %+v", p)
	}
}

func TestJobLabelsFromTemplate(t *testing.T) {
	job := newJob()
	want := map[string]string{
		"app": "pi", "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
		"controller-uid": "uid-1", "batch.kubernetes.io/controller-uid": "uid-1",
	}
	for k, v := range want {
		if job.Spec.Template.Labels[k] != v || job.Labels[k] != v {
			t.Errorf("label %s: template %q, job %q, want %q", k, job.Spec.Template.Labels[k], job.Labels[k], v)
		}
	}
	if sel := job.Spec.Selector.MatchLabels; len(sel) != 1 || sel["batch.kubernetes.io/controller-uid"] != "uid-1" {
		t.Errorf("selector = %v", sel)
	}

	// Labels of its own keep the job from taking the template's.
	own := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "u", Labels: map[string]string{"team": "a"}},
		Spec: batchv1.JobSpec{Template: podTemplate()}}
	JobStrategy{}.Default(own)
	JobStrategy{}.PrepareForCreate(ctx, own)
	if len(own.Labels) != 1 {
		t.Errorf("job labels = %v", own.Labels)
	}
	// Without template labels, the job gets the generated ones when read.
	bare := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "u"}, Spec: batchv1.JobSpec{Template: podTemplate()}}
	bare.Spec.Template.Labels = nil
	JobStrategy{}.Default(bare)
	JobStrategy{}.PrepareForCreate(ctx, bare)
	if len(bare.Labels) != 0 {
		t.Errorf("job labels before read = %v", bare.Labels)
	}
	JobStrategy{}.Default(bare)
	if bare.Labels["job-name"] != "pi" {
		t.Errorf("job labels after read = %v", bare.Labels)
	}
}

func TestJobPrepareForCreate(t *testing.T) {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "uid-1", Generation: 4},
		Spec: batchv1.JobSpec{
			ManualSelector: ptr.To(true), Template: podTemplate(),
			Selector:   &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pi"}},
			Scheduling: &batchv1.JobSchedulingConfiguration{},
		},
		Status: batchv1.JobStatus{Active: 2},
	}
	JobStrategy{}.Default(job)
	JobStrategy{}.PrepareForCreate(ctx, job)
	if len(job.Spec.Template.Labels) != 1 || len(job.Spec.Selector.MatchLabels) != 1 {
		t.Errorf("manual selector: labels %v, selector %v", job.Spec.Template.Labels, job.Spec.Selector)
	}
	if job.Generation != 1 || job.Status.Active != 0 || job.Spec.Scheduling != nil {
		t.Errorf("generation %d, status %+v, scheduling %v", job.Generation, job.Status, job.Spec.Scheduling)
	}
	checkErrs(t, JobStrategy{}.Validate(ctx, job))

	// Labels the client set are kept, and rejected when wrong.
	wrong := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "pi", UID: "uid-1"}, Spec: batchv1.JobSpec{Template: podTemplate()}}
	wrong.Spec.Template.Labels["job-name"] = "other"
	JobStrategy{}.Default(wrong)
	JobStrategy{}.PrepareForCreate(ctx, wrong)
	errs := JobStrategy{}.Validate(ctx, wrong)
	checkErrs(t, errs, inv("spec.template.metadata.labels[job-name]"))
	checkDetail(t, errs, "spec.template.metadata.labels[job-name]", "must be 'pi'")
}

func TestValidateJob(t *testing.T) {
	indexed := func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](4), ptr.To[int32](2)
	}
	tests := []struct {
		name   string
		mutate func(*batchv1.Job)
		want   []wantErr
	}{
		{"valid", func(*batchv1.Job) {}, nil},
		{"on failure", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, nil},
		{"restart always", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			[]wantErr{req("spec.template.spec.restartPolicy")}},
		{"negative counts", func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions, j.Spec.BackoffLimit = ptr.To[int32](-1), ptr.To[int32](-1), ptr.To[int32](-1)
			j.Spec.ActiveDeadlineSeconds, j.Spec.TTLSecondsAfterFinished = ptr.To[int64](-1), ptr.To[int32](-1)
		}, []wantErr{inv("spec.parallelism"), inv("spec.completions"), inv("spec.backoffLimit"), inv("spec.activeDeadlineSeconds"),
			inv("spec.ttlSecondsAfterFinished")}},
		{"zero active deadline", func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) }, nil},
		{"no selector", func(j *batchv1.Job) { j.Spec.Selector = nil },
			[]wantErr{req("spec.selector"), inv("spec.template.metadata.labels")}},
		{"foreign selector", func(j *batchv1.Job) { j.Spec.Selector.MatchLabels["app"] = "other" },
			[]wantErr{inv("spec.selector"), inv("spec.template.metadata.labels")}},
		{"no uid", func(j *batchv1.Job) { j.UID = "" }, []wantErr{req("metadata.uid"), inv("spec.template.metadata.labels[controller-uid]"),
			inv("spec.template.metadata.labels[batch.kubernetes.io/controller-uid]"), inv("spec.selector")}},
		{"missing generated label", func(j *batchv1.Job) { delete(j.Spec.Template.Labels, "batch.kubernetes.io/job-name") },
			[]wantErr{req("spec.template.metadata.labels[batch.kubernetes.io/job-name]")}},
		{"bad completion mode", func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To[batchv1.CompletionMode]("Some") },
			[]wantErr{unsupp("spec.completionMode")}},
		{"indexed", indexed, nil},
		{"indexed without completions", func(j *batchv1.Job) { indexed(j); j.Spec.Completions = nil }, []wantErr{req("spec.completions")}},
		{"indexed name too long", func(j *batchv1.Job) { indexed(j); j.Name = strings.Repeat("j", 62); fixLabels(j) },
			[]wantErr{inv("metadata.name")}},
		{"indexed parallelism", func(j *batchv1.Job) { indexed(j); j.Spec.Parallelism = ptr.To[int32](100_001) }, []wantErr{inv("spec.parallelism")}},
		{"per index needs indexed", func(j *batchv1.Job) {
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = ptr.To[int32](1), ptr.To[int32](1)
		},
			[]wantErr{inv("spec.backoffLimitPerIndex"), inv("spec.maxFailedIndexes")}},
		{"max failed needs per index", func(j *batchv1.Job) { indexed(j); j.Spec.MaxFailedIndexes = ptr.To[int32](1) },
			[]wantErr{req("spec.backoffLimitPerIndex")}},
		{"max failed over completions", func(j *batchv1.Job) {
			indexed(j)
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = ptr.To[int32](1), ptr.To[int32](5)
		}, []wantErr{inv("spec.maxFailedIndexes")}},
		{"high completions", func(j *batchv1.Job) {
			indexed(j)
			j.Spec.Completions, j.Spec.Parallelism, j.Spec.BackoffLimitPerIndex = ptr.To[int32](200_000), ptr.To[int32](20_000), ptr.To[int32](1)
			j.Name = "p"
			fixLabels(j)
		}, []wantErr{req("spec.maxFailedIndexes"), inv("spec.parallelism")}},
		{"managed by", func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/queue") }, nil},
		{"bad managed by", func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("queue") }, []wantErr{inv("spec.managedBy")}},
		{"bad replacement", func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To[batchv1.PodReplacementPolicy]("Never") },
			[]wantErr{unsupp("spec.podReplacementPolicy")}},
		{"success policy needs indexed", func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
		}, []wantErr{inv("spec.successPolicy")}},
		{"success policy", func(j *batchv1.Job) {
			indexed(j)
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{
				{SucceededIndexes: ptr.To("0,2-3"), SucceededCount: ptr.To[int32](2)},
				{},
				{SucceededIndexes: ptr.To("3,1"), SucceededCount: ptr.To[int32](5)},
			}}
		}, []wantErr{req("spec.successPolicy.rules[1]"), inv("spec.successPolicy.rules[2].succeededIndexes"),
			inv("spec.successPolicy.rules[2].succeededCount"), inv("spec.successPolicy.rules[2].succeededCount")}},
		{"empty success policy", func(j *batchv1.Job) { indexed(j); j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{} },
			[]wantErr{req("spec.successPolicy.rules")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := newJob()
			tt.mutate(job)
			checkErrs(t, JobStrategy{}.Validate(ctx, job), tt.want...)
		})
	}
}

// fixLabels regenerates the labels of a job whose name changed.
func fixLabels(j *batchv1.Job) {
	for _, k := range []string{"job-name", "batch.kubernetes.io/job-name"} {
		j.Spec.Template.Labels[k] = j.Name
	}
}

func TestValidatePodFailurePolicy(t *testing.T) {
	rule := func(r batchv1.PodFailurePolicyRule) func(*batchv1.Job) {
		return func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{r}}
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}
	}
	exit := func(op batchv1.PodFailurePolicyOnExitCodesOperator, values ...int32) *batchv1.PodFailurePolicyOnExitCodesRequirement {
		return &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: values}
	}
	cond := []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}
	const r0 = "spec.podFailurePolicy.rules[0]"
	tests := []struct {
		name   string
		mutate func(*batchv1.Job)
		want   []wantErr
	}{
		{"exit codes", rule(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: exit("In", 1, 2)}), nil},
		{"conditions", rule(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: cond}), nil},
		{"no action", rule(batchv1.PodFailurePolicyRule{OnPodConditions: cond}), []wantErr{req(r0 + ".action")}},
		{"bad action", rule(batchv1.PodFailurePolicyRule{Action: "Retry", OnPodConditions: cond}), []wantErr{unsupp(r0 + ".action")}},
		{"fail index without per index", rule(batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionFailIndex, OnPodConditions: cond}),
			[]wantErr{inv(r0 + ".action")}},
		{"both", rule(batchv1.PodFailurePolicyRule{Action: "Count", OnExitCodes: exit("NotIn", 0), OnPodConditions: cond}), []wantErr{inv(r0)}},
		{"neither", rule(batchv1.PodFailurePolicyRule{Action: "Count"}), []wantErr{inv(r0)}},
		{"exit code values", rule(batchv1.PodFailurePolicyRule{Action: "Count", OnExitCodes: exit("In", 3, 0, 3)}),
			[]wantErr{inv(r0 + ".onExitCodes.values[1]"), dup(r0 + ".onExitCodes.values[2]"), inv(r0 + ".onExitCodes.values")}},
		{"no exit code", rule(batchv1.PodFailurePolicyRule{Action: "Count", OnExitCodes: exit("In")}), []wantErr{inv(r0 + ".onExitCodes.values")}},
		{"bad operator", rule(batchv1.PodFailurePolicyRule{Action: "Count", OnExitCodes: exit("Has", 1)}), []wantErr{unsupp(r0 + ".onExitCodes.operator")}},
		{"unknown container", rule(batchv1.PodFailurePolicyRule{Action: "Count", OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: ptr.To("sidecar"), Operator: "In", Values: []int32{1},
		}}), []wantErr{inv(r0 + ".onExitCodes.containerName")}},
		{"bad condition", rule(batchv1.PodFailurePolicyRule{Action: "Count", OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
			{Type: "bad type", Status: "Maybe"},
		}}), []wantErr{inv(r0 + ".onPodConditions[0].type"), unsupp(r0 + ".onPodConditions[0].status")}},
		{"needs restart never", func(j *batchv1.Job) {
			rule(batchv1.PodFailurePolicyRule{Action: "Count", OnPodConditions: cond})(j)
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}, []wantErr{inv("spec.template.spec.restartPolicy")}},
		{"needs replacement failed", func(j *batchv1.Job) {
			rule(batchv1.PodFailurePolicyRule{Action: "Count", OnPodConditions: cond})(j)
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}, []wantErr{unsupp("spec.podReplacementPolicy")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := newJob()
			tt.mutate(job)
			checkErrs(t, JobStrategy{}.Validate(ctx, job), tt.want...)
		})
	}
}

func TestValidateJobUpdate(t *testing.T) {
	suspended := func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }
	tests := []struct {
		name   string
		old    func(*batchv1.Job)
		mutate func(*batchv1.Job)
		want   []wantErr
	}{
		{"parallelism", nil, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](3) }, nil},
		{"suspend", nil, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }, nil},
		{"active deadline", nil, func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) }, nil},
		{"completions", nil, func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](3) }, []wantErr{inv("spec.completions")}},
		{"selector", nil, func(j *batchv1.Job) { j.Spec.Selector.MatchLabels["app"] = "pi" }, []wantErr{inv("spec.selector")}},
		{"completion mode", nil, func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) },
			[]wantErr{inv("spec.completionMode")}},
		{"managed by", nil, func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/q") }, []wantErr{inv("spec.managedBy")}},
		{"template of running job", nil, func(j *batchv1.Job) { j.Spec.Template.Spec.NodeSelector = map[string]string{"a": "b"} },
			[]wantErr{inv("spec.template")}},
		{"scheduling of suspended job", suspended, func(j *batchv1.Job) {
			j.Spec.Template.Spec.NodeSelector = map[string]string{"a": "b"}
			j.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
			j.Spec.Template.Annotations = map[string]string{"a": "b"}
		}, nil},
		{"resources of suspended job", suspended, func(j *batchv1.Job) {
			j.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: mustQuantity("1")}
		}, nil},
		{"image of suspended job", suspended, func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "x" },
			[]wantErr{inv("spec.template.spec")}},
		{"scheduling of started suspended job", func(j *batchv1.Job) {
			suspended(j)
			j.Status.StartTime = &metav1.Time{}
		}, func(j *batchv1.Job) { j.Spec.Template.Spec.NodeSelector = map[string]string{"a": "b"} }, []wantErr{inv("spec.template")}},
		{"scheduling of job suspended after start", func(j *batchv1.Job) {
			suspended(j)
			j.Status.StartTime = &metav1.Time{}
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}
		}, func(j *batchv1.Job) { j.Spec.Template.Spec.NodeSelector = map[string]string{"a": "b"} }, nil},
		{"indexed completions with parallelism", func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) },
			func(j *batchv1.Job) { j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](3), ptr.To[int32](3) }, nil},
		{"indexed completions alone", func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) },
			func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](3) }, []wantErr{inv("spec.completions")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := newJob()
			if tt.old != nil {
				tt.old(old)
			}
			job := old.DeepCopy()
			tt.mutate(job)
			checkErrs(t, JobStrategy{}.ValidateUpdate(ctx, job, old), tt.want...)
		})
	}
}

func TestJobPrepareForUpdate(t *testing.T) {
	old := newJob()
	old.Generation, old.Status.Active = 2, 1
	job := old.DeepCopy()
	job.Status.Active = 5
	job.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{}
	JobStrategy{}.PrepareForUpdate(ctx, job, old)
	if job.Generation != 2 || job.Status.Active != 1 || job.Spec.Scheduling != nil {
		t.Errorf("generation %d, status %+v, scheduling %v", job.Generation, job.Status, job.Spec.Scheduling)
	}
	job.Spec.Suspend = ptr.To(true)
	JobStrategy{}.PrepareForUpdate(ctx, job, old)
	if job.Generation != 3 {
		t.Errorf("generation %d after spec change", job.Generation)
	}
	st := old.DeepCopy()
	st.Spec.Parallelism = ptr.To[int32](9)
	JobStatusStrategy{}.PrepareForUpdate(ctx, st, old)
	if *st.Spec.Parallelism != 1 {
		t.Errorf("status update changed the spec")
	}
}

func TestJobFieldsAndWarnings(t *testing.T) {
	job := newJob()
	job.Status.Succeeded = 2
	if f := (JobStrategy{}).Fields(job); len(f) != 1 || f["status.successful"] != "2" {
		t.Errorf("fields = %v", f)
	}
	if w := (JobStrategy{}).WarningsOnCreate(ctx, job); len(w) != 0 {
		t.Errorf("warnings = %v", w)
	}
	job.Name = "Pi"
	job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	job.Spec.Completions, job.Spec.Parallelism = ptr.To[int32](200_000), ptr.To[int32](20_000)
	if w := (JobStrategy{}).WarningsOnCreate(ctx, job); len(w) != 2 {
		t.Errorf("warnings = %v", w)
	}
	if w := (JobStrategy{}).WarningsOnUpdate(ctx, job, job); len(w) != 0 {
		t.Errorf("warnings without spec change = %v", w)
	}
}
