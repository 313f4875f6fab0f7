package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// ReplicationControllerScale returns the desired and observed replicas and
// the selector of a replication controller, for its scale subresource.
func ReplicationControllerScale(obj runtime.Object) (replicas, statusReplicas int32, selector string, err error) {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return 0, 0, "", fmt.Errorf("%T is not a ReplicationController", obj)
	}
	replicas = 1
	if rc.Spec.Replicas != nil {
		replicas = *rc.Spec.Replicas
	}
	return replicas, rc.Status.Replicas, labels.SelectorFromSet(rc.Spec.Selector).String(), nil
}

// SetReplicationControllerReplicas sets a replication controller's replicas.
func SetReplicationControllerReplicas(obj runtime.Object, n int32) error {
	rc, ok := obj.(*corev1.ReplicationController)
	if !ok {
		return fmt.Errorf("%T is not a ReplicationController", obj)
	}
	rc.Spec.Replicas = &n
	return nil
}
