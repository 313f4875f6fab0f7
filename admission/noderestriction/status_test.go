package noderestriction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
)

// TestAdmitPodStatus: a kubelet updates the status of its own pods, but
// neither their labels nor the resource claims recorded for them.
func TestAdmitPodStatus(t *testing.T) {
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}}, Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{ResourceClaimStatuses: []corev1.PodResourceClaimStatus{{Name: "c", ResourceClaimName: ptr.To("p-c")}}}}
	const prefix = `pods "p" is forbidden: node "n1" `
	for _, c := range []struct {
		name   string
		change func(*corev1.Pod)
		want   string
	}{
		{"phase", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }, ""},
		{"labels", func(p *corev1.Pod) { p.Labels["a"] = "c" }, prefix + "cannot update labels through pod status"},
		{"claim status", func(p *corev1.Pod) { p.Status.ResourceClaimStatuses[0].ResourceClaimName = ptr.To("other") },
			prefix + "cannot update resource claim statues"},
		{"claim status gone", func(p *corev1.Pod) { p.Status.ResourceClaimStatuses = nil }, prefix + "cannot update resource claim statues"},
		{"extended claim status", func(p *corev1.Pod) {
			p.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: "x"}
		}, prefix + "cannot update extended resource claim status"},
		{"node allocatable claim statuses", func(p *corev1.Pod) {
			p.Status.NodeAllocatableResourceClaimStatuses = []corev1.NodeAllocatableResourceClaimStatus{{ResourceClaimName: "x",
				Mapping: []corev1.NodeAllocatableMappedResources{{Name: "cpu", Quantity: ptr.To(resource.MustParse("1"))}}}}
		}, prefix + "cannot update node allocatable resource claim statuses"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pod := old.DeepCopy()
			c.change(pod)
			err := admitPodStatus("n1", &admission.Attributes{Operation: admission.Update, Name: "p", Subresource: "status",
				Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Object: pod, OldObject: old})
			if got := errText(err); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestAdmitPVCStatusDiff: a kubelet's change to a claim beyond its
// capacity and conditions is refused with the diff kube shows, of its
// internal type: every field, by its Go name.
func TestAdmitPVCStatusDiff(t *testing.T) {
	old := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}
	pvc := old.DeepCopy()
	pvc.Status.Phase = corev1.ClaimLost
	err := admitPVCStatus("n1", &admission.Attributes{Operation: admission.Update, Name: "c", Subresource: "status",
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, Object: pvc, OldObject: old})
	const want = `persistentvolumeclaims "c" is forbidden: node "n1" is not allowed to update fields other than status.quantity and status.conditions: ` +
		"@@ -16,7 +16,7 @@\n" +
		`   "VolumeAttributesClassName": null` + "\n" +
		"  },\n" +
		`  "Status": {` + "\n" +
		`-  "Phase": "",` + "\n" +
		`+  "Phase": "Lost",` + "\n" +
		`   "AccessModes": null,` + "\n" +
		`   "Capacity": null,` + "\n" +
		`   "Conditions": null,` + "\n"
	if got := errText(err); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
