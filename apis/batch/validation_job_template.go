package batch

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// validatePodTemplateUpdate forbids changes of the pod template of a job,
// except, while the job is suspended and has no active pods and either never
// started or carries the Suspended condition, changes of the scheduling
// directives (node affinity, node selector, tolerations, scheduling gates,
// labels, annotations) and of container resources. These are kube 1.37's
// rules with MutableSchedulingDirectivesForSuspendedJobs and
// MutablePodResourcesForSuspendedJobs on, their default.
func validatePodTemplateUpdate(spec *batchv1.JobSpec, oldJob *batchv1.Job, fldPath *field.Path) field.ErrorList {
	t, oldT := &spec.Template, &oldJob.Spec.Template
	mutable := templateMutable(oldJob)
	if mutable {
		oldT = withSchedulingDirectivesOf(oldT, t)
	}
	if !ptr.Deref(oldJob.Spec.Suspend, false) || !mutable {
		return apivalidation.ValidateImmutableField(t, oldT, fldPath.Child("template"))
	}
	return podResourcesOnlyUpdate(&t.Spec, &oldT.Spec, fldPath.Child("template", "spec"))
}

// templateMutable reports whether the pod template of old may change: a
// suspended job without active pods that never started or was suspended
// after it did.
func templateMutable(old *batchv1.Job) bool {
	suspended := ptr.Deref(old.Spec.Suspend, false)
	notStarted := old.Status.StartTime == nil
	return suspended && (notStarted || isConditionTrue(old.Status.Conditions, batchv1.JobSuspended)) && old.Status.Active == 0
}

// withSchedulingDirectivesOf returns a copy of old with the scheduling
// directives of t, so that comparing it to t ignores them.
func withSchedulingDirectivesOf(old, t *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
	old = old.DeepCopy()
	switch {
	case t.Spec.Affinity == nil && old.Spec.Affinity != nil:
		// Clearing affinity is a change of node affinity only if nothing
		// else was set.
		old.Spec.Affinity.NodeAffinity = nil
		if *old.Spec.Affinity == (corev1.Affinity{}) {
			old.Spec.Affinity = nil
		}
	case t.Spec.Affinity != nil && old.Spec.Affinity == nil:
		old.Spec.Affinity = &corev1.Affinity{NodeAffinity: t.Spec.Affinity.NodeAffinity}
	case t.Spec.Affinity != nil && old.Spec.Affinity != nil:
		old.Spec.Affinity.NodeAffinity = t.Spec.Affinity.NodeAffinity
	}
	old.Spec.NodeSelector = t.Spec.NodeSelector
	old.Spec.Tolerations = t.Spec.Tolerations
	old.Annotations = t.Annotations
	old.Labels = t.Labels
	old.Spec.SchedulingGates = t.Spec.SchedulingGates
	return old
}

// podResourcesOnlyUpdate forbids any change of the pod spec but the
// resources of containers and init containers that keep their place and
// name.
func podResourcesOnlyUpdate(spec, old *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	old = old.DeepCopy()
	copyResources := func(dst, src []corev1.Container) {
		if len(dst) != len(src) {
			return
		}
		for i := range src {
			if dst[i].Name == src[i].Name {
				dst[i].Resources = src[i].Resources
			}
		}
	}
	copyResources(old.Containers, spec.Containers)
	copyResources(old.InitContainers, spec.InitContainers)
	return apivalidation.ValidateImmutableField(*spec, *old, fldPath)
}
