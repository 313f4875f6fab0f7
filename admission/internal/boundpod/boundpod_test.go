package boundpod

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

func pod(node string, generation int64) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: generation}, Spec: corev1.PodSpec{NodeName: node}}
}

func TestSpecChanged(t *testing.T) {
	for _, tc := range []struct {
		name     string
		obj, old runtime.Object
		checked  bool
		bad      bool
	}{
		{"unbound", pod("", 2), pod("", 1), false, false},
		{"bound, spec changed", pod("n", 2), pod("n", 1), true, false},
		{"bound, same generation", pod("n", 1), pod("n", 1), false, false},
		{"not a pod", &corev1.Node{}, pod("n", 1), false, true},
		{"old not a pod", pod("n", 2), &corev1.Node{}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, old, err := SpecChanged(&admission.Attributes{Object: tc.obj, OldObject: tc.old})
			if tc.bad != apierrors.IsBadRequest(err) || !tc.bad && err != nil {
				t.Fatalf("error %v, want a 400: %t", err, tc.bad)
			}
			if tc.checked != (p != nil && old != nil) {
				t.Errorf("pods %v %v, want them: %t", p, old, tc.checked)
			}
		})
	}
}

func TestNode(t *testing.T) {
	a := &admission.Attributes{Resource: corev1.SchemeGroupVersion.WithResource("pods"), Name: "p"}
	nodes := func(_ context.Context, name string) (*corev1.Node, error) {
		switch name {
		case "n":
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, nil
		case "down":
			return nil, errors.New("etcd is down")
		}
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	if n, err := Node(context.Background(), nodes, a, "n"); err != nil || n.Name != "n" {
		t.Errorf("Node(n) = %v, %v", n, err)
	}
	for name, want := range map[string]string{
		"gone": `pods "p" is forbidden: node "gone" not found`,
		"down": `pods "p" is forbidden: failed to get node "down": etcd is down`,
	} {
		if _, err := Node(context.Background(), nodes, a, name); !apierrors.IsForbidden(err) || err.Error() != want {
			t.Errorf("Node(%s) = %v, want %q", name, err, want)
		}
	}
}
