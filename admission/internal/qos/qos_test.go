package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestBestEffort(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
	zero := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("0")}
	storage := corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
	pod := func(init, main corev1.ResourceList, podLevel *corev1.ResourceRequirements, class corev1.PodQOSClass) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Resources: podLevel,
			InitContainers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: init}}},
			Containers:     []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: main}}}},
			Status: corev1.PodStatus{QOSClass: class}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"nothing", pod(nil, nil, nil, ""), true},
		{"zero memory and storage only", pod(zero, storage, nil, ""), true},
		{"a container's cpu", pod(nil, cpu, nil, ""), false},
		{"an init container's cpu", pod(cpu, nil, nil, ""), false},
		{"pod-level cpu decides", pod(nil, nil, &corev1.ResourceRequirements{Limits: cpu}, ""), false},
		{"pod-level storage only leaves it to containers", pod(nil, cpu, &corev1.ResourceRequirements{Requests: storage}, ""), false},
		{"pod-level zero memory", pod(nil, cpu, &corev1.ResourceRequirements{Requests: zero}, ""), true},
		{"the status's class stands", pod(nil, cpu, nil, corev1.PodQOSBestEffort), true},
	} {
		if got := BestEffort(tc.pod); got != tc.want {
			t.Errorf("%s: BestEffort = %v, want %v", tc.name, got, tc.want)
		}
	}
}
