package podrefs

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func secretEnv(name string) corev1.EnvVar {
	return corev1.EnvVar{Name: "e", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}
}

func configMapEnv(name string) corev1.EnvVar {
	return corev1.EnvVar{Name: "e", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}
}

// TestRefs: every place a pod names a secret or a config map, in kube's
// visiting order, ephemeral containers' environment included.
func TestRefs(t *testing.T) {
	ref := func(name string) *corev1.LocalObjectReference { return &corev1.LocalObjectReference{Name: name} }
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}},
		InitContainers:   []corev1.Container{{Env: []corev1.EnvVar{secretEnv("init-env"), configMapEnv("init-cm"), {Name: "plain", Value: "v"}}}},
		Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: *ref("envfrom")}},
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: *ref("cm-envfrom")}},
		}}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Env: []corev1.EnvVar{secretEnv("debug-env"), configMapEnv("debug-cm")}}}},
		Volumes: []corev1.Volume{
			{VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol"}}},
			{VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: *ref("cm-vol")}}},
			{VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: *ref("projected")}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: *ref("cm-projected")}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}}},
			{VolumeSource: corev1.VolumeSource{AzureFile: &corev1.AzureFileVolumeSource{SecretName: "azure"}}},
			{VolumeSource: corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{SecretRef: ref("cephfs")}}},
			{VolumeSource: corev1.VolumeSource{CephFS: &corev1.CephFSVolumeSource{}}},
			{VolumeSource: corev1.VolumeSource{Cinder: &corev1.CinderVolumeSource{SecretRef: ref("cinder")}}},
			{VolumeSource: corev1.VolumeSource{FlexVolume: &corev1.FlexVolumeSource{SecretRef: ref("flex")}}},
			{VolumeSource: corev1.VolumeSource{RBD: &corev1.RBDVolumeSource{SecretRef: ref("rbd")}}},
			{VolumeSource: corev1.VolumeSource{ScaleIO: &corev1.ScaleIOVolumeSource{SecretRef: ref("scaleio")}}},
			{VolumeSource: corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{SecretRef: ref("iscsi")}}},
			{VolumeSource: corev1.VolumeSource{StorageOS: &corev1.StorageOSVolumeSource{SecretRef: ref("storageos")}}},
			{VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{NodePublishSecretRef: ref("csi")}}},
			{VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	}}
	wantSecrets := []string{"pull", "init-env", "envfrom", "debug-env", "vol", "projected", "azure", "cephfs", "cinder", "flex",
		"rbd", "scaleio", "iscsi", "storageos", "csi"}
	if got := Secrets(pod); !slices.Equal(got, wantSecrets) {
		t.Errorf("Secrets = %q\nwant %q", got, wantSecrets)
	}
	wantConfigMaps := []string{"init-cm", "cm-envfrom", "debug-cm", "cm-vol", "cm-projected"}
	if got := ConfigMaps(pod); !slices.Equal(got, wantConfigMaps) {
		t.Errorf("ConfigMaps = %q\nwant %q", got, wantConfigMaps)
	}
	if Secrets(&corev1.Pod{}) != nil || ConfigMaps(&corev1.Pod{}) != nil {
		t.Error("an empty pod names objects")
	}
}
