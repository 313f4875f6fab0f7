package endpoints

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestWithoutFields(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
		Spec:       corev1.PodSpec{NodeName: "n"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"nodeName": "n"}, "status": map[string]any{"phase": "Running"},
	}}
	tests := []struct {
		name   string
		in     runtime.Object
		fields []string
		want   runtime.Object
		same   bool // the input itself comes back
	}{
		{"struct without spec", pod, []string{"spec"},
			&corev1.Pod{ObjectMeta: pod.ObjectMeta, Status: pod.Status}, false},
		{"struct without spec and status", pod, []string{"spec", "status"},
			&corev1.Pod{ObjectMeta: pod.ObjectMeta}, false},
		{"metadata is never dropped", pod, []string{"metadata"}, pod, true},
		{"no such field", pod, []string{"data"}, pod, true},
		{"unstructured without status", u, []string{"status"},
			&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{"nodeName": "n"},
			}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.DeepCopyObject()
			got := withoutFields(tt.in, resetFieldsToDrop(tt.fields))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
			if (got == tt.in) != tt.same {
				t.Errorf("returned the input itself: %v, want %v", got == tt.in, tt.same)
			}
			if !reflect.DeepEqual(tt.in, before) {
				t.Errorf("input changed: %#v", tt.in)
			}
		})
	}
}
