package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestScale(t *testing.T) {
	multi := &metav1.LabelSelector{
		MatchLabels:      map[string]string{"app": "web"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"b", "a"}}},
	}
	tests := []struct {
		name                     string
		obj                      runtime.Object
		replicas, statusReplicas int32
		selector                 string
	}{
		{"deployment", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: selector()},
			Status: appsv1.DeploymentStatus{Replicas: 2}}, 3, 2, "app=web"},
		{"replica set", &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: multi},
			Status: appsv1.ReplicaSetStatus{Replicas: 1}}, 0, 1, "app=web,tier in (a,b)"},
		{"stateful set", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Selector: selector()},
			Status: appsv1.StatefulSetStatus{Replicas: 4}}, 1, 4, "app=web"},
		{"no selector", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}}, 2, 0, ""},
		{"everything", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{}}}, 2, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			replicas, statusReplicas, sel, err := ScaleOf(tt.obj)
			if err != nil || replicas != tt.replicas || statusReplicas != tt.statusReplicas || sel != tt.selector {
				t.Errorf("ScaleOf = %d, %d, %q, %v; want %d, %d, %q", replicas, statusReplicas, sel, err, tt.replicas, tt.statusReplicas, tt.selector)
			}
			if err := SetReplicas(tt.obj, 7); err != nil {
				t.Fatal(err)
			}
			if replicas, _, _, _ := ScaleOf(tt.obj); replicas != 7 {
				t.Errorf("replicas after SetReplicas = %d", replicas)
			}
		})
	}

	bad := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Near"}},
	}}}
	if _, _, _, err := ScaleOf(bad); err == nil {
		t.Error("invalid selector: no error")
	}
	if _, _, _, err := ScaleOf(&appsv1.DaemonSet{}); err == nil {
		t.Error("daemon set: no error")
	}
	if err := SetReplicas(&corev1.Pod{}, 1); err == nil {
		t.Error("pod: no error")
	}
}
