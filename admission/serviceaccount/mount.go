package serviceaccount

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
)

const (
	// volumePrefix starts the name of the token volume.
	volumePrefix = "kube-api-access-"
	// mountPath is where containers find the token, CA and namespace.
	mountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenExpirationSeconds is kube's token lifetime for these volumes:
	// an hour and seven seconds, the seconds telling kube's authenticator
	// that the kubelet refreshes it (older clients keep an expired token
	// working, with a warning).
	tokenExpirationSeconds = 3607
	// RootCAConfigMap is the config map every namespace gets with the
	// cluster's CA, which the token volume projects.
	RootCAConfigMap = "kube-root-ca.crt"
)

func generateName(prefix string) string { return prefix + utilrand.String(5) }

// mountToken adds the token volume (unless the pod has one already) and
// mounts it in every container that mounts nothing at its path.
func mountToken(pod *corev1.Pod, generate func(string) string) {
	name, has := "", false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, volumePrefix) {
			name, has = v.Name, true
			break
		}
	}
	if name == "" {
		name = generate(volumePrefix)
	}
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: mountPath}
	needed := false
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !mountsAt(cs[i].VolumeMounts, mountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	if !has && needed {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}})
	}
}

func mountsAt(mounts []corev1.VolumeMount, path string) bool {
	for _, m := range mounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// TokenVolumeSource is the projection of a pod's token volume: a bound
// token, the cluster's CA and the pod's namespace.
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](corev1.ProjectedVolumeSourceDefaultMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](tokenExpirationSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: RootCAConfigMap},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}
}

// validateMirror refuses what a kubelet's mirror pod may not have: an
// account, secrets, tokens.
func validateMirror(pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName != "" {
		return errors.New("a mirror pod may not reference service accounts")
	}
	if refersToSecrets(pod) {
		return errors.New("a mirror pod may not reference secrets")
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				return errors.New("a mirror pod may not use ServiceAccountToken volume projections")
			}
		}
	}
	return nil
}
