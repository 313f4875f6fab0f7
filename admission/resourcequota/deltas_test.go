package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
)

func pvc(size, vac string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "5"},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
	if vac != "" {
		c.Spec.VolumeAttributesClassName = ptr.To(vac)
	}
	return c
}

// TestDeltas: an update is charged its growth by a quota that charged the
// old object, all its usage by one it enters, nothing when it shrinks;
// creates are charged whole.
func TestDeltas(t *testing.T) {
	all := corev1.ResourceQuota{Status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{"requests.storage": resource.MustParse("10Gi")}}}
	gold := *all.DeepCopy()
	gold.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: corev1.ResourceQuotaScopeVolumeAttributesClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"gold"}}}}
	for _, tc := range []struct {
		name     string
		op       admission.Operation
		obj, old *corev1.PersistentVolumeClaim
		want     []string // requests.storage charged to all and to gold ("" nothing)
	}{
		{name: "create", op: admission.Create, obj: pvc("1Gi", "gold"), want: []string{"1Gi", "1Gi"}},
		{name: "growth", op: admission.Update, obj: pvc("3Gi", "gold"), old: pvc("1Gi", "gold"), want: []string{"2Gi", "2Gi"}},
		{name: "enters a scope", op: admission.Update, obj: pvc("3Gi", "gold"), old: pvc("1Gi", ""), want: []string{"2Gi", "3Gi"}},
		{name: "shrinks", op: admission.Update, obj: pvc("1Gi", "gold"), old: pvc("3Gi", "gold"), want: []string{"", ""}},
		{name: "fractional bytes round up", op: admission.Create, obj: pvc("1500m", ""), want: []string{"2", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: tc.op, Resource: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, Object: tc.obj}
			if tc.old != nil {
				a.OldObject = tc.old
			}
			got, err := deltasOf(a, evaluatorFor(a.Resource.GroupResource()), []corev1.ResourceQuota{all, gold})
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want {
				q, ok := got[i][corev1.ResourceRequestsStorage]
				if w == "" && ok || w != "" && (!ok || q.Cmp(resource.MustParse(w)) != 0) {
					t.Errorf("quota %d charged %v, want %q", i, got[i], w)
				}
			}
		})
	}
}
