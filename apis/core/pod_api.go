package core

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The pod spec API shared by every workload resource (pods, pod templates,
// replication controllers, deployments, replica sets, stateful sets, daemon
// sets, jobs, cron jobs). The bodies live in pod_defaults.go and
// validation_pod*.go.

// DefaultPodTemplateSpec applies kube's defaults to a pod template.
func DefaultPodTemplateSpec(t *corev1.PodTemplateSpec) {
	DefaultPodSpec(&t.Spec)
}

// ValidatePodTemplateSpec validates a pod template: its metadata (labels,
// annotations) and its spec.
func ValidatePodTemplateSpec(t *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	return validatePodTemplateSpec(t, fldPath)
}

// DefaultPodSpec applies kube's defaults to a pod spec.
func DefaultPodSpec(spec *corev1.PodSpec) {
	defaultPodSpec(spec)
}

// ValidatePodSpec validates a pod spec; podMeta is the pod's or the
// template's metadata.
func ValidatePodSpec(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	return validatePodSpec(spec, podMeta, fldPath)
}
