package apps

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ScaleOf returns the desired replicas, the observed replicas and the label
// selector of a deployment, replica set or stateful set, in the form of the
// scale subresource. The selector is kube's string form of spec.selector,
// empty when the object has none.
func ScaleOf(obj runtime.Object) (replicas, statusReplicas int32, selector string, err error) {
	var sel *metav1.LabelSelector
	switch o := obj.(type) {
	case *appsv1.Deployment:
		replicas, statusReplicas, sel = desiredReplicas(o.Spec.Replicas), o.Status.Replicas, o.Spec.Selector
	case *appsv1.ReplicaSet:
		replicas, statusReplicas, sel = desiredReplicas(o.Spec.Replicas), o.Status.Replicas, o.Spec.Selector
	case *appsv1.StatefulSet:
		replicas, statusReplicas, sel = desiredReplicas(o.Spec.Replicas), o.Status.Replicas, o.Spec.Selector
	default:
		return 0, 0, "", fmt.Errorf("%T has no scale subresource", obj)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return 0, 0, "", fmt.Errorf("invalid label selector: %w", err)
	}
	return replicas, statusReplicas, s.String(), nil
}

// SetReplicas sets the desired replicas of a deployment, replica set or
// stateful set.
func SetReplicas(obj runtime.Object, n int32) error {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.Spec.Replicas = &n
	case *appsv1.ReplicaSet:
		o.Spec.Replicas = &n
	case *appsv1.StatefulSet:
		o.Spec.Replicas = &n
	default:
		return fmt.Errorf("%T has no scale subresource", obj)
	}
	return nil
}

// desiredReplicas is spec.replicas, whose default is 1.
func desiredReplicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}
