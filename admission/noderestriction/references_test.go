package noderestriction

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestAPIReference(t *testing.T) {
	ref := corev1.LocalObjectReference{Name: "x"}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"nothing", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}}, ""},
		{"service account", corev1.PodSpec{ServiceAccountName: "sa"}, "serviceaccounts"},
		{"pull secret", corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{ref}}, "secrets"},
		{"secret env in an init container", corev1.PodSpec{InitContainers: []corev1.Container{{Env: []corev1.EnvVar{{Name: "A",
			ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref}}}}}}}, "secrets"},
		{"secret volume", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "x"}}}}}, "secrets"},
		{"config map env", corev1.PodSpec{Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref}}}}}}, "configmaps"},
		{"claim", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}}}, "persistentvolumeclaims"},
		{"token projection", corev1.PodSpec{Volumes: []corev1.Volume{{Name: "p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t"}}}}}}}}, "serviceaccounts (via projected volumes)"},
	}
	for _, tt := range tests {
		got, err := apiReference(&corev1.Pod{Spec: tt.spec})
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	if _, err := apiReference(&corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "u"}}}}); err == nil {
		t.Error("a volume of no known type: no error")
	}
}

func TestForbiddenLabels(t *testing.T) {
	tests := []struct {
		labels []string
		want   []string
	}{
		{[]string{"foo", "example.com/x", "kubernetes.io/hostname", "topology.kubernetes.io/zone", "kubelet.kubernetes.io/a", "x.node.kubernetes.io/b"}, nil},
		{[]string{"node-restriction.kubernetes.io/x", "a.node-restriction.kubernetes.io/y"}, []string{"a.node-restriction.kubernetes.io/y", "node-restriction.kubernetes.io/x"}},
		{[]string{"kubernetes.io/foo", "k8s.io/a", "x.k8s.io/b", "node-role.kubernetes.io/master"}, []string{"k8s.io/a", "kubernetes.io/foo", "node-role.kubernetes.io/master", "x.k8s.io/b"}},
	}
	for _, tt := range tests {
		m := map[string]string{}
		for _, l := range tt.labels {
			m[l] = "v"
		}
		got := forbiddenLabels(modifiedLabels(m, nil))
		if len(got) != len(tt.want) {
			t.Errorf("%v: %v, want %v", tt.labels, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%v: %v, want %v", tt.labels, got, tt.want)
			}
		}
	}
}
