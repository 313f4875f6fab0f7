package resourcequota

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Tracks reports whether objects of gr are charged to the quota name.
func Tracks(gr schema.GroupResource, name corev1.ResourceName) bool {
	return evaluatorFor(gr).tracks(name)
}

// Usage is what obj of gr consumes of the quota's hard names, nil when
// the quota does not apply to it (out of its scopes, or a finished pod).
func Usage(gr schema.GroupResource, q *corev1.ResourceQuota, obj runtime.Object) (corev1.ResourceList, error) {
	if pod, ok := obj.(*corev1.Pod); ok && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed) {
		return nil, nil
	}
	ev := evaluatorFor(gr)
	restricted, err := matching(ev, q, obj)
	if err != nil || restricted == nil {
		return nil, err
	}
	u, err := ev.usage(obj)
	if err != nil {
		return nil, err
	}
	return mask(u, restricted), nil
}

// Add returns a + b.
func Add(a, b corev1.ResourceList) corev1.ResourceList { return add(a, b) }
