package core

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// PodStrategy is the strategy of the pods resource.
type PodStrategy struct {
	// Policy is --allow-privileged.
	Policy PodPolicy
}

var (
	_ registry.Strategy         = PodStrategy{}
	_ registry.Defaulter        = PodStrategy{}
	_ registry.FieldSelectable  = PodStrategy{}
	_ registry.GracefulDeleter  = PodStrategy{}
	_ registry.WarningsOnCreate = PodStrategy{}
)

// NamespaceScoped is true.
func (PodStrategy) NamespaceScoped() bool { return true }

// Default applies kube's pod defaults.
func (PodStrategy) Default(obj runtime.Object) { DefaultPod(obj.(*corev1.Pod)) }

// PrepareForCreate starts the pod Pending with a fresh status, generation 1
// and its QoS class, and applies what kube derives from the spec on create:
// the SchedulingGated condition and the label keys of affinity terms and
// topology spread constraints.
func (PodStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	pod.Generation = 1
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	if len(pod.Spec.SchedulingGates) > 0 {
		setPodCondition(&pod.Status, corev1.PodCondition{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated,
			Message: "Scheduling is blocked due to non-empty scheduling gates",
		})
	}
	applyAffinityLabelKeys(pod)
	applyTopologySpreadLabelKeys(pod)
	pod.Status.QOSClass = PodQOSClass(pod)
}

// PrepareForUpdate keeps the status, which changes through pods/status, and
// the pod-level resources a client unaware of them dropped; it bumps the
// generation when the spec changed.
func (PodStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	pod.Status = oldPod.Status
	if pod.Spec.Resources == nil && oldPod.Spec.Resources != nil {
		pod.Spec.Resources = oldPod.Spec.Resources.DeepCopy()
	}
	bumpPodGeneration(pod, oldPod)
}

func bumpPodGeneration(pod, old *corev1.Pod) {
	if !equality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		pod.Generation = old.Generation + 1
	}
}

// Validate validates a new pod.
func (s PodStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	pod := obj.(*corev1.Pod)
	return append(ValidatePod(pod), s.Policy.Validate(&pod.Spec, field.NewPath("spec"))...)
}

// ValidateUpdate validates an update of a pod.
func (s PodStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pod := obj.(*corev1.Pod)
	return append(ValidatePodUpdate(pod, old.(*corev1.Pod)), s.Policy.Validate(&pod.Spec, field.NewPath("spec"))...)
}

// WarningsOnCreate warns of a pod name that is no DNS label: it becomes the
// pod's hostname.
func (PodStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return dnsLabelNameWarning(obj.(*corev1.Pod).Name, "this is used in the Pod's hostname")
}

func dnsLabelNameWarning(name, use string) []string {
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return []string{fmt.Sprintf("metadata.name: %s, which can result in surprising behavior; a DNS label is recommended: %v", use, msgs)}
	}
	return nil
}

// GracePeriod is kube's pod grace period on delete: the one asked for, else
// the pod's terminationGracePeriodSeconds; none for a pod that never ran on
// a node or has finished; a negative one becomes 1. It writes the period
// back into opts, as kube does, so that the deletion records it.
func (PodStrategy) GracePeriod(_ context.Context, obj runtime.Object, opts *metav1.DeleteOptions) int64 {
	if opts == nil {
		return 0
	}
	pod := obj.(*corev1.Pod)
	var period int64
	switch {
	case opts.GracePeriodSeconds != nil:
		period = *opts.GracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	opts.GracePeriodSeconds = &period
	return period
}

// Fields returns the pod field selectors. status.podIPs is accepted, as by
// kube, but never holds a value; spec.host is the legacy name of
// spec.nodeName.
func (PodStrategy) Fields(obj runtime.Object) fields.Set {
	pod := obj.(*corev1.Pod)
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	return fields.Set{
		"spec.nodeName":            pod.Spec.NodeName,
		"spec.host":                pod.Spec.NodeName,
		"spec.restartPolicy":       string(pod.Spec.RestartPolicy),
		"spec.schedulerName":       pod.Spec.SchedulerName,
		"spec.serviceAccountName":  pod.Spec.ServiceAccountName,
		"spec.hostNetwork":         strconv.FormatBool(pod.Spec.HostNetwork),
		"status.phase":             string(pod.Status.Phase),
		"status.podIP":             podIP,
		"status.podIPs":            "",
		"status.nominatedNodeName": pod.Status.NominatedNodeName,
	}
}

// PodStatusStrategy is the strategy of pods/status: an update changes the
// status and what the kubelet may write of the metadata, never the spec.
type PodStatusStrategy struct{ PodStrategy }

// PrepareForUpdate keeps the spec and owner references of old; a client
// that dropped the QoS class, observed generations or claim statuses it
// does not know keeps the old ones.
func (PodStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	pod.Spec = oldPod.Spec
	// The Store keeps deletionTimestamp itself.
	pod.OwnerReferences = oldPod.OwnerReferences
	if pod.Status.QOSClass == "" {
		pod.Status.QOSClass = oldPod.Status.QOSClass
	}
	if pod.Status.ResourceClaimStatuses == nil {
		pod.Status.ResourceClaimStatuses = oldPod.Status.ResourceClaimStatuses
	}
	if pod.Status.ExtendedResourceClaimStatus == nil {
		pod.Status.ExtendedResourceClaimStatus = oldPod.Status.ExtendedResourceClaimStatus
	}
	keepObservedGenerations(&pod.Status, &oldPod.Status)
}

// keepObservedGenerations keeps the old observedGeneration of the status
// and of its conditions, matched by type in order, where the new has none.
func keepObservedGenerations(s, old *corev1.PodStatus) {
	if s.ObservedGeneration == 0 {
		s.ObservedGeneration = old.ObservedGeneration
	}
	byType := map[corev1.PodConditionType][]int64{}
	for _, c := range old.Conditions {
		byType[c.Type] = append(byType[c.Type], c.ObservedGeneration)
	}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		var gen int64
		if gens := byType[c.Type]; len(gens) > 0 {
			gen, byType[c.Type] = gens[0], gens[1:]
		}
		if c.ObservedGeneration == 0 {
			c.ObservedGeneration = gen
		}
	}
}

// ValidateUpdate validates a status update.
func (PodStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidatePodStatusUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
}

// EphemeralContainersStrategy is the strategy of pods/ephemeralcontainers:
// an update adds ephemeral containers and changes nothing else.
type EphemeralContainersStrategy struct{ PodStrategy }

// PrepareForUpdate keeps everything of old but spec.ephemeralContainers and
// the metadata a status update may change, and bumps the generation.
func (EphemeralContainersStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	ecs := pod.Spec.EphemeralContainers
	pod.Spec = *oldPod.Spec.DeepCopy()
	pod.Spec.EphemeralContainers = ecs
	pod.Status = oldPod.Status
	metav1.ResetObjectMetaForStatus(&pod.ObjectMeta, &oldPod.ObjectMeta)
	bumpPodGeneration(pod, oldPod)
}

// ValidateUpdate validates the new ephemeral containers.
func (s EphemeralContainersStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	pod := obj.(*corev1.Pod)
	// Only the ephemeral containers are validated here, as kube does.
	ephemeral := &corev1.PodSpec{EphemeralContainers: pod.Spec.EphemeralContainers}
	return append(ValidatePodEphemeralContainersUpdate(pod, old.(*corev1.Pod)), s.Policy.Validate(ephemeral, field.NewPath("spec"))...)
}
