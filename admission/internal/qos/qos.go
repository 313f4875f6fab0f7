// Package qos is kube's pod QoS class as the API server sees it: the
// status's class when set, else computed from the pod's (or its pod-level)
// cpu and memory requests and limits.
package qos

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// BestEffort reports whether the pod is of the BestEffort class: no cpu or
// memory request or limit anywhere.
func BestEffort(pod *corev1.Pod) bool {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass == corev1.PodQOSBestEffort
	}
	if r := pod.Spec.Resources; r != nil && podLevelSet(r) {
		return none(*r)
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if !none(c.Resources) {
				return false
			}
		}
	}
	return true
}

// computed are the resources the QoS class is computed from.
var computed = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// none reports whether r asks for and limits no cpu or memory.
func none(r corev1.ResourceRequirements) bool {
	for _, l := range []corev1.ResourceList{r.Requests, r.Limits} {
		for _, n := range computed {
			if q, ok := l[n]; ok && !q.IsZero() {
				return false
			}
		}
	}
	return true
}

// podLevelSet reports whether pod-level resources set cpu, memory or huge
// pages (kube's IsPodLevelResourcesSet): then they alone decide the class.
func podLevelSet(r *corev1.ResourceRequirements) bool {
	for _, l := range []corev1.ResourceList{r.Requests, r.Limits} {
		for n := range l {
			if n == corev1.ResourceCPU || n == corev1.ResourceMemory || strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix) {
				return true
			}
		}
	}
	return false
}
