package storageprotection

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// markUnused keeps a bound claim's Unused condition true to its pods, as
// kube's pvc-protection controller does: False ("PodUsingPVC") while a pod
// that has not terminated names it, True ("NoPodsUsingPVC") otherwise, its
// lastTransitionTime the time it last changed. It returns the claim as
// stored after the change.
func (c *Claims) markUnused(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	used, err := c.inUse(ctx, pvc, referencesClaim)
	if err != nil {
		return nil, err
	}
	want := corev1.PersistentVolumeClaimCondition{Type: corev1.PersistentVolumeClaimUnused, Status: corev1.ConditionTrue,
		Reason: "NoPodsUsingPVC", Message: "No pods are currently referencing this PVC"}
	if used {
		want.Status, want.Reason, want.Message = corev1.ConditionFalse, "PodUsingPVC", "A pod is currently referencing this PVC"
	}
	if cur := unusedCondition(pvc); cur != nil && cur.Status == want.Status {
		return pvc, nil
	}
	want.LastTransitionTime = metav1.Now()
	pvc = pvc.DeepCopy()
	if cur := unusedCondition(pvc); cur != nil {
		*cur = want
	} else {
		pvc.Status.Conditions = append(pvc.Status.Conditions, want)
	}
	return c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
}

func unusedCondition(pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaimCondition {
	for i := range pvc.Status.Conditions {
		if pvc.Status.Conditions[i].Type == corev1.PersistentVolumeClaimUnused {
			return &pvc.Status.Conditions[i]
		}
	}
	return nil
}

// referencesClaim is kube's test of a pod using a claim for the Unused
// condition: the pod has not terminated and names the claim, or its
// generic ephemeral volume is the claim (the pod owns it), scheduled or
// not.
func referencesClaim(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if terminated(pod) {
		return false
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if v.Ephemeral != nil && pod.Name+"-"+v.Name == pvc.Name && ownedBy(pvc, pod) {
			return true
		}
	}
	return false
}

// terminated is kube's terminated pod: it succeeded or failed, or it is
// being deleted and none of its containers runs.
func terminated(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return true
	}
	if pod.DeletionTimestamp == nil {
		return false
	}
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for _, s := range statuses {
			if s.State.Terminated == nil && s.State.Waiting == nil {
				return false
			}
		}
	}
	return true
}
