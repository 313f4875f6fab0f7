package batch

import (
	"context"
	"math"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// The unprefixed labels the job controller has always set on its pods, next
// to their batch.kubernetes.io/ counterparts.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// JobStrategy is the strategy of the jobs resource.
type JobStrategy struct {
	// Policy is --allow-privileged.
	Policy core.PodPolicy
}

var (
	_ registry.Strategy                   = JobStrategy{}
	_ registry.Defaulter                  = JobStrategy{}
	_ registry.FieldSelectable            = JobStrategy{}
	_ registry.WarningsOnCreate           = JobStrategy{}
	_ registry.WarningsOnUpdate           = JobStrategy{}
	_ registry.GarbageCollectionDefaulter = JobStrategy{}
	_ registry.DeleteWarner               = JobStrategy{}
)

// NamespaceScoped is true.
func (JobStrategy) NamespaceScoped() bool { return true }

// Default applies kube's batch/v1 defaults. One completion and a
// parallelism of one when neither is set; six retries, or unlimited ones
// when retries are counted per index; NonIndexed, not suspended, no manual
// selector; pods replaced once failed when a pod failure policy is set, and
// once terminating or failed otherwise.
//
// A job without labels takes the very label map of its pod template, as in
// kube: the labels PrepareForCreate generates then show on the job too.
func (JobStrategy) Default(obj runtime.Object) {
	job := obj.(*batchv1.Job)
	spec := &job.Spec
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = ptr.To[int32](1)
	}
	if spec.Parallelism == nil {
		spec.Parallelism = ptr.To[int32](1)
	}
	if spec.BackoffLimit == nil {
		spec.BackoffLimit = ptr.To[int32](6)
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = ptr.To[int32](math.MaxInt32)
		}
	}
	if spec.Template.Labels != nil && len(job.Labels) == 0 {
		job.Labels = spec.Template.Labels
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.PodReplacementPolicy == nil {
		spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = ptr.To(false)
	}
	defaultPodFailurePolicy(spec.PodFailurePolicy)
	core.DefaultPodTemplateSpec(&spec.Template)
}

// defaultPodFailurePolicy makes pod condition patterns match True by
// default.
func defaultPodFailurePolicy(p *batchv1.PodFailurePolicy) {
	if p == nil {
		return
	}
	for i := range p.Rules {
		for j := range p.Rules[i].OnPodConditions {
			if c := &p.Rules[i].OnPodConditions[j]; c.Status == "" {
				c.Status = corev1.ConditionTrue
			}
		}
	}
}

// PrepareForCreate clears the status, starts the generation at 1, drops the
// disabled spec.scheduling and, unless the selector is manual, generates the
// selector and pod labels from the job's name and uid. The Store sets the
// uid before it calls PrepareForCreate.
func (JobStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	job := obj.(*batchv1.Job)
	if !ptr.Deref(job.Spec.ManualSelector, false) {
		generateSelector(job)
	}
	job.Status = batchv1.JobStatus{}
	job.Generation = 1
	dropScheduling(&job.Spec, nil)
}

// generateSelector labels the pod template with the job's name and uid,
// under the prefixed and the legacy keys, and selects the prefixed uid
// label. Labels the client already set are kept: validation rejects them
// when they are wrong.
func generateSelector(job *batchv1.Job) {
	t := &job.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for key, value := range map[string]string{
		legacyJobNameLabel:         job.Name,
		batchv1.JobNameLabel:       job.Name,
		legacyControllerUIDLabel:   string(job.UID),
		batchv1.ControllerUidLabel: string(job.UID),
	} {
		if _, ok := t.Labels[key]; !ok {
			t.Labels[key] = value
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{}
	}
	if job.Spec.Selector.MatchLabels == nil {
		job.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		job.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(job.UID)
	}
}

// dropScheduling drops spec.scheduling unless old used it: the
// WorkloadWithJob feature is alpha and off in kube 1.37.
func dropScheduling(spec, old *batchv1.JobSpec) {
	if old == nil || old.Scheduling == nil {
		spec.Scheduling = nil
	}
}

// PrepareForUpdate keeps the status and bumps the generation when the spec
// changed.
func (JobStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	job, oldJob := obj.(*batchv1.Job), old.(*batchv1.Job)
	job.Status = oldJob.Status
	dropScheduling(&job.Spec, &oldJob.Spec)
	registry.CountSpecChange(job, oldJob, &job.Spec, &oldJob.Spec)
}

// Validate validates a new job.
func (s JobStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	j := obj.(*batchv1.Job)
	return append(ValidateJob(j), s.Policy.ValidateTemplate(&j.Spec.Template, field.NewPath("spec", "template"))...)
}

// ValidateUpdate validates an update of the main resource.
func (s JobStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	j := obj.(*batchv1.Job)
	return append(ValidateJobUpdate(j, old.(*batchv1.Job)), s.Policy.ValidateTemplate(&j.Spec.Template, field.NewPath("spec", "template"))...)
}

// WarningsOnCreate warns about a name that is not a DNS label and about a
// spec the job controller may not track well.
func (JobStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	job := obj.(*batchv1.Job)
	return append(podNameWarnings(job.Name), jobSpecWarnings(field.NewPath("spec"), &job.Spec)...)
}

// WarningsOnUpdate repeats the spec warnings when the spec changed.
func (JobStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	job := obj.(*batchv1.Job)
	if job.Generation == old.(*batchv1.Job).Generation {
		return nil
	}
	return jobSpecWarnings(field.NewPath("spec"), &job.Spec)
}

// Fields returns status.successful, the one job field selector beyond
// metadata.
func (JobStrategy) Fields(obj runtime.Object) fields.Set {
	return fields.Set{"status.successful": strconv.Itoa(int(obj.(*batchv1.Job).Status.Succeeded))}
}

// JobStatusStrategy is the strategy of jobs/status: an update changes the
// status only.
type JobStatusStrategy struct{ JobStrategy }

// PrepareForUpdate keeps the spec of old.
func (JobStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*batchv1.Job).Spec = old.(*batchv1.Job).Spec
}

// ValidateUpdate validates the status transition.
func (JobStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateJobStatusUpdate(obj.(*batchv1.Job), old.(*batchv1.Job))
}

// WarningsOnUpdate has nothing to say about a status update.
func (JobStatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// DefaultGarbageCollectionPolicy is kube's: a delete through batch/v1
// orphans the job's pods unless told otherwise, for the clients that
// predate the garbage collector.
func (JobStrategy) DefaultGarbageCollectionPolicy(ctx context.Context) registry.GarbageCollectionPolicy {
	return core.OrphanThroughVersion(ctx, batchv1.SchemeGroupVersion)
}

// jobsOrphanPods is kube's warning on a batch/v1 job deleted without a
// policy: its pods stay, which surprises those who expect them gone.
const jobsOrphanPods = "child pods are preserved by default when jobs are deleted; " +
	"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"

// WarningsOnDelete warns that a delete without propagationPolicy or
// orphanDependents orphans the job's pods.
func (s JobStrategy) WarningsOnDelete(ctx context.Context, opts *metav1.DeleteOptions) []string {
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	if opts.PropagationPolicy != nil || opts.OrphanDependents != nil {
		return nil
	}
	if s.DefaultGarbageCollectionPolicy(ctx) == registry.OrphanDependents {
		return []string{jobsOrphanPods}
	}
	return nil
}
