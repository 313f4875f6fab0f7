package nodetaint

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/admission"
)

// TestAdmit: a new node gets the not-ready NoSchedule taint once, beside
// its own; a node that has it is left as it is.
func TestAdmit(t *testing.T) {
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	own := corev1.Taint{Key: "example.com/gpu", Effect: corev1.TaintEffectNoExecute}
	for _, tc := range []struct {
		name  string
		have  []corev1.Taint
		sub   string
		taint []corev1.Taint
	}{
		{"bare", nil, "", []corev1.Taint{notReady}},
		{"own taint", []corev1.Taint{own}, "", []corev1.Taint{own, notReady}},
		{"already tainted", []corev1.Taint{notReady, own}, "", []corev1.Taint{notReady, own}},
		{"not ready NoExecute only", []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}}, "",
			[]corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}, notReady}},
		{"status", nil, "status", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{Spec: corev1.NodeSpec{Taints: tc.have}}
			a := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("nodes"),
				Subresource: tc.sub, Object: node}
			if err := (Plugin{}).Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			if len(node.Spec.Taints) != len(tc.taint) {
				t.Fatalf("taints %+v, want %+v", node.Spec.Taints, tc.taint)
			}
			for i := range tc.taint {
				if !node.Spec.Taints[i].MatchTaint(&tc.taint[i]) {
					t.Errorf("taints %+v, want %+v", node.Spec.Taints, tc.taint)
				}
			}
		})
	}
	if (Plugin{}).Handles(admission.Update) || !(Plugin{}).Handles(admission.Create) {
		t.Error("the plugin handles creates only")
	}
}
