package antiaffinity

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission"
)

func podWith(required, preferred string) *corev1.Pod {
	aa := &corev1.PodAntiAffinity{}
	if required != "" {
		aa.RequiredDuringSchedulingIgnoredDuringExecution = []corev1.PodAffinityTerm{{TopologyKey: corev1.LabelHostname}, {TopologyKey: required}}
	}
	if preferred != "" {
		aa.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.WeightedPodAffinityTerm{{PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: preferred}}}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Affinity: &corev1.Affinity{PodAntiAffinity: aa}}}
}

// TestValidate: only required terms by host; preferred ones, pods without
// anti-affinity and subresources pass.
func TestValidate(t *testing.T) {
	const zone = corev1.LabelTopologyZone
	for _, tc := range []struct {
		name      string
		pod       *corev1.Pod
		sub       string
		forbidden bool
	}{
		{"no affinity", &corev1.Pod{}, "", false},
		{"by host", podWith(corev1.LabelHostname, ""), "", false},
		{"by zone", podWith(zone, ""), "", true},
		{"empty key", podWith(" ", ""), "", true},
		{"preferred by zone", podWith("", zone), "", false},
		{"status", podWith(zone, ""), "status", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: admission.Create, Resource: corev1.SchemeGroupVersion.WithResource("pods"),
				Subresource: tc.sub, Object: tc.pod}
			err := Plugin{}.Validate(context.Background(), a)
			if tc.forbidden != (err != nil) || err != nil && !apierrors.IsForbidden(err) {
				t.Fatalf("Validate = %v, want forbidden %t", err, tc.forbidden)
			}
			if want := `pods "p" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ` + zone +
				` but only key kubernetes.io/hostname is allowed`; tc.name == "by zone" && err.Error() != want {
				t.Errorf("message %q, want %q", err, want)
			}
		})
	}
}
