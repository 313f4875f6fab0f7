package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodResizeStrategy is the strategy of pods/resize: an update changes the
// cpu and memory of containers (and the pod-level resources, kube v1.37's
// beta InPlacePodLevelResourcesVerticalScaling being on) in place, and
// nothing else.
type PodResizeStrategy struct{ PodStrategy }

// PrepareForUpdate keeps everything of old but the containers' resources
// and resize policies and the pod-level resources, and bumps the
// generation. Added, removed or renamed containers are kept for
// ValidateUpdate to refuse.
func (PodResizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	if len(pod.Spec.Containers) == len(oldPod.Spec.Containers) && len(pod.Spec.InitContainers) == len(oldPod.Spec.InitContainers) {
		containers, okC := resizedContainers(pod.Spec.Containers, oldPod.Spec.Containers)
		inits, okI := resizedContainers(pod.Spec.InitContainers, oldPod.Spec.InitContainers)
		if okC && okI {
			resources := pod.Spec.Resources
			pod.Spec = *oldPod.Spec.DeepCopy()
			pod.Spec.Resources, pod.Spec.Containers, pod.Spec.InitContainers = resources, containers, inits
		}
	}
	pod.Status = oldPod.Status
	metav1.ResetObjectMetaForStatus(&pod.ObjectMeta, &oldPod.ObjectMeta)
	bumpPodGeneration(pod, oldPod)
}

// resizedContainers are the old containers with the new ones' resources and
// resize policies; false when a container was renamed or moved.
func resizedContainers(new, old []corev1.Container) ([]corev1.Container, bool) {
	if len(new) == 0 {
		return new, true
	}
	out := make([]corev1.Container, len(old))
	for i := range old {
		if new[i].Name != old[i].Name {
			return new, false
		}
		out[i] = *old[i].DeepCopy()
		out[i].Resources, out[i].ResizePolicy = new[i].Resources, new[i].ResizePolicy
	}
	return out, true
}

// ValidateUpdate is kube's resize check: a valid pod, not static nor
// Windows, the same QoS class, the same containers in the same order, no
// requests or limits removed, and changes of cpu and memory only.
func (s PodResizeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	errs := validatePodMetaAndSpec(pod)
	if _, static := oldPod.Annotations[corev1.MirrorPodAnnotationKey]; static {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if oldPod.Spec.OS != nil && oldPod.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	specPath := field.NewPath("spec")
	computed := pod.DeepCopy()
	computed.Status.QOSClass = ""
	if PodQOSClass(oldPod) != PodQOSClass(computed) {
		errs = append(errs, field.Invalid(specPath, pod.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupported(oldPod) {
		errs = append(errs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}
	if order := validateResizeOrder(pod, oldPod, specPath); order != nil {
		return append(errs, order...)
	}
	errs = append(errs, validateResizedContainers(pod.Spec.Containers, oldPod.Spec.Containers, specPath.Child("containers"), false)...)
	errs = append(errs, validateResizedContainers(pod.Spec.InitContainers, oldPod.Spec.InitContainers, specPath.Child("initContainers"), true)...)
	return append(errs, s.Policy.Validate(&pod.Spec, specPath)...)
}

// resizeSupported is false for a pod whose running containers report no
// resources: its node predates in-place resize.
func resizeSupported(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

func validateResizeOrder(pod, old *corev1.Pod, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", pod.Spec.Containers, old.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, old.Spec.InitContainers}} {
		if len(l.new) != len(l.old) {
			errs = append(errs, field.Forbidden(specPath.Child(l.name), l.name+" may not be added or removed on resize"))
			continue
		}
		for i := range l.old {
			if l.new[i].Name != l.old[i].Name {
				errs = append(errs, field.Forbidden(specPath.Child(l.name).Index(i).Child("name"), l.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// validateResizedContainers refuses removed requests or limits and any
// change but cpu and memory; a non-sidecar init container with a
// RestartContainer resize policy is not resized.
func validateResizedContainers(new, old []corev1.Container, path *field.Path, init bool) field.ErrorList {
	var errs field.ErrorList
	for i := range old {
		resPath := path.Index(i).Child("resources")
		if removed(new[i].Resources.Requests, old[i].Resources.Requests) {
			errs = append(errs, field.Forbidden(resPath.Child("requests"), "resource requests cannot be removed"))
		}
		if removed(new[i].Resources.Limits, old[i].Resources.Limits) {
			errs = append(errs, field.Forbidden(resPath.Child("limits"), "resource limits cannot be removed"))
		}
		c := *new[i].DeepCopy()
		c.Resources = corev1.ResourceRequirements{Limits: withOldCPUMemory(c.Resources.Limits, old[i].Resources.Limits),
			Requests: withOldCPUMemory(c.Resources.Requests, old[i].Resources.Requests), Claims: c.Resources.Claims}
		if apiequality.Semantic.DeepEqual(c, old[i]) {
			if init && !isSidecar(&old[i]) && !apiequality.Semantic.DeepEqual(new[i], old[i]) && restartsOnResize(new[i]) {
				errs = append(errs, field.Forbidden(path.Index(i), "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
			}
			continue
		}
		if init {
			errs = append(errs, field.Forbidden(path.Index(i), "only cpu and memory resources for init or sidecar containers are mutable"))
		} else {
			errs = append(errs, field.Forbidden(field.NewPath("spec"), "only cpu and memory resources are mutable"))
		}
	}
	return errs
}

func removed(list, old corev1.ResourceList) bool {
	for name := range old {
		if _, ok := list[name]; !ok {
			return true
		}
	}
	return false
}

// withOldCPUMemory is list with old's cpu and memory instead of its own.
func withOldCPUMemory(list, old corev1.ResourceList) corev1.ResourceList {
	if list == nil && old == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for name, q := range list {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			out[name] = q
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := old[name]; ok {
			out[name] = q
		}
	}
	return out
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func restartsOnResize(c corev1.Container) bool {
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy == corev1.RestartContainer {
			return true
		}
	}
	return false
}
