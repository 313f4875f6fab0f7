package ownerrefs

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestOwnerChanges(t *testing.T) {
	cm := func(refs ...metav1.OwnerReference) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{OwnerReferences: refs}}
	}
	plain := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "1"}
	blocking := plain
	blocking.BlockOwnerDeletion = ptr.To(true)
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "p", UID: "2", BlockOwnerDeletion: ptr.To(true)}
	for _, tc := range []struct {
		name         string
		obj, old     runtime.Object
		changes      bool
		wantBlocking int
	}{
		{"create without owners", cm(), nil, false, 0},
		{"create with a blocking owner", cm(blocking), nil, true, 1},
		{"update keeping owners", cm(blocking), cm(blocking), false, 0},
		{"update with nil and empty owners", cm(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{}}}, false, 0},
		{"update making a reference block", cm(blocking), cm(plain), true, 1},
		{"update adding a blocking owner", cm(blocking, other), cm(blocking), true, 1},
		{"update unblocking", cm(plain), cm(blocking), true, 0},
	} {
		if got := changesOwners(tc.obj, tc.old); got != tc.changes {
			t.Errorf("%s: changesOwners = %v, want %v", tc.name, got, tc.changes)
		}
		if got := newBlocking(tc.obj, tc.old); len(got) != tc.wantBlocking {
			t.Errorf("%s: newBlocking = %v, want %d", tc.name, got, tc.wantBlocking)
		}
	}
}
