package internaldiff

import (
	"strings"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMarshal(t *testing.T) {
	ts := metav1.Date(2026, 12, 3, 7, 0, 0, 0, metav1.Now().Location()).Rfc3339Copy()
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"Go names, empty fields written", corev1.PersistentVolumeClaimSpec{
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse("1Gi")}},
		}, `{"AccessModes":null,"Selector":null,"Resources":{"Limits":null,"Requests":{"storage":"1Gi"}},"VolumeName":"","StorageClassName":null,"VolumeMode":null,"DataSource":null,"DataSourceRef":null,"VolumeAttributesClassName":null}`},
		{"apimachinery types keep their tags", corev1.PersistentVolumeClaimSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"b": "2", "a": "1"}},
		}, `{"AccessModes":null,"Selector":{"matchLabels":{"a":"1","b":"2"}},"Resources":{"Limits":null,"Requests":null},"VolumeName":"","StorageClassName":null,"VolumeMode":null,"DataSource":null,"DataSourceRef":null,"VolumeAttributesClassName":null}`},
		{"times write themselves", certv1.CertificateSigningRequestCondition{Type: "Approved", LastUpdateTime: ts},
			`{"Type":"Approved","Status":"","Reason":"","Message":"","LastUpdateTime":"` + ts.UTC().Format("2006-01-02T15:04:05Z") + `","LastTransitionTime":null}`},
		{"embedded structs are promoted", corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			`{"Name":"v","HostPath":null,"EmptyDir":{"Medium":"","SizeLimit":null,"Mode":null},"GCEPersistentDisk":null,`},
		{"bytes as base64", corev1.Secret{Data: map[string][]byte{"k": []byte("v")}}, `"Data":{"k":"dg=="}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(Marshal(tt.in))
			if got != tt.want && !strings.Contains(got, tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestDiffMatchesKube: kube-apiserver v1.37.2's message for a resize of an
// unbound claim (recorded in test/parity), whose diff shows the internal
// type's Go field names.
func TestDiffMatchesKube(t *testing.T) {
	class := "sc"
	old := corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse("1Gi")}},
		StorageClassName: &class,
	}
	updated := *old.DeepCopy()
	updated.Resources.Requests["storage"] = resource.MustParse("2Gi")
	const want = "@@ -6,7 +6,7 @@\n" +
		"  \"Resources\": {\n" +
		"   \"Limits\": null,\n" +
		"   \"Requests\": {\n" +
		"-   \"storage\": \"1Gi\"\n" +
		"+   \"storage\": \"2Gi\"\n" +
		"   }\n" +
		"  },\n" +
		"  \"VolumeName\": \"\",\n"
	if got := Diff(old, updated); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestMarshalObject: a whole object renders as kube's internal type does,
// TypeMeta's and ObjectMeta's fields promoted by their JSON names.
func TestMarshalObject(t *testing.T) {
	pvc := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{Kind: "PersistentVolumeClaim", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Labels: map[string]string{"a": "b"}},
	}
	got := string(Marshal(pvc))
	want := `{"kind":"PersistentVolumeClaim","apiVersion":"v1","name":"c","namespace":"ns","labels":{"a":"b"},"Spec":{"AccessModes":null,`
	if !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
}
