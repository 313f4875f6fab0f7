package defaulttolerationseconds

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/admission"
)

// TestAdmit: the not-ready and unreachable tolerations are added unless the
// pod tolerates those NoExecute taints already (by key, or by an empty key
// or effect, which tolerate every one); each pod gets its own seconds.
func TestAdmit(t *testing.T) {
	notReady, unreachable := corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable
	for _, tc := range []struct {
		name string
		have []corev1.Toleration
		want []string // keys of the added tolerations
	}{
		{"none", nil, []string{notReady, unreachable}},
		{"not-ready tolerated", []corev1.Toleration{{Key: notReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, []string{unreachable}},
		{"unreachable, any effect", []corev1.Toleration{{Key: unreachable, Operator: corev1.TolerationOpExists}}, []string{notReady}},
		{"everything", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, nil},
		{"NoSchedule only", []corev1.Toleration{{Key: notReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			[]string{notReady, unreachable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tc.have}}
			a := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"), Object: pod}
			if err := New(300, 60).Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			added := pod.Spec.Tolerations[len(tc.have):]
			if len(added) != len(tc.want) {
				t.Fatalf("added %+v, want %q", added, tc.want)
			}
			for i, key := range tc.want {
				seconds := int64(300)
				if key == unreachable {
					seconds = 60
				}
				tol := added[i]
				if tol.Key != key || tol.Effect != corev1.TaintEffectNoExecute || tol.Operator != corev1.TolerationOpExists ||
					tol.TolerationSeconds == nil || *tol.TolerationSeconds != seconds {
					t.Errorf("added %+v, want %s for %ds", tol, key, seconds)
				}
			}
		})
	}
	p := New(300, 300)
	first, second := &corev1.Pod{}, &corev1.Pod{}
	for _, pod := range []*corev1.Pod{first, second} {
		_ = p.Admit(context.Background(), &admission.Attributes{Resource: corev1.SchemeGroupVersion.WithResource("pods"), Object: pod})
	}
	*first.Spec.Tolerations[0].TolerationSeconds = 1
	if *second.Spec.Tolerations[0].TolerationSeconds != 300 {
		t.Error("two pods share their toleration seconds")
	}
}
