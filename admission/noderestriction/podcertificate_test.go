package noderestriction

import (
	"reflect"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestMountsSigner(t *testing.T) {
	projected := func(sources ...corev1.VolumeProjection) corev1.Volume {
		return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}}
	}
	cert := func(signer string) corev1.VolumeProjection {
		return corev1.VolumeProjection{PodCertificate: &corev1.PodCertificateProjection{SignerName: signer}}
	}
	token := corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "example.com/foo"}}
	for _, c := range []struct {
		name    string
		volumes []corev1.Volume
		want    bool
	}{
		{"no volumes", nil, false},
		{"the signer", []corev1.Volume{projected(token, cert("example.com/foo"))}, true},
		{"in a later volume", []corev1.Volume{{Name: "e", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, projected(cert("example.com/foo"))}, true},
		{"another signer", []corev1.Volume{projected(cert("example.com/bar"))}, false},
		{"a token for the signer's name", []corev1.Volume{projected(token)}, false},
	} {
		if got := mountsSigner(&corev1.Pod{Spec: corev1.PodSpec{Volumes: c.volumes}}, "example.com/foo"); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPodCertificateSpec(t *testing.T) {
	want := certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/foo", PodName: "p", PodUID: "pu",
		ServiceAccountName: "sa", ServiceAccountUID: "su", NodeName: "n1", NodeUID: "nu"}
	beta := &certificatesv1beta1.PodCertificateRequest{Spec: certificatesv1beta1.PodCertificateRequestSpec{SignerName: "example.com/foo", PodName: "p", PodUID: "pu",
		ServiceAccountName: "sa", ServiceAccountUID: "su", NodeName: "n1", NodeUID: "nu", PKIXPublicKey: []byte("k")}}
	for _, obj := range []runtime.Object{&certificatesv1.PodCertificateRequest{Spec: want}, beta} {
		got, ok := podCertificateSpec(obj)
		if !ok || !reflect.DeepEqual(*got, want) {
			t.Errorf("%T: got %+v, %v; want %+v", obj, got, ok, want)
		}
	}
	if _, ok := podCertificateSpec(&corev1.Pod{}); ok {
		t.Error("a pod is no PodCertificateRequest")
	}
}
