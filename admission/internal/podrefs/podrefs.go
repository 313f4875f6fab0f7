// Package podrefs lists the API objects a pod refers to by name, as kube's
// pod utilities visit them: admission plugins limit what a pod may name.
package podrefs

import corev1 "k8s.io/api/core/v1"

// containers are every container of pod, ephemeral ones as far as they
// name objects (environment).
func containers(pod *corev1.Pod) []corev1.Container {
	out := append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, e := range pod.Spec.EphemeralContainers {
		out = append(out, corev1.Container{Env: e.Env, EnvFrom: e.EnvFrom})
	}
	return out
}

// Secrets are the secrets pod names: pull secrets, environment, and the
// secret references of volumes.
func Secrets(pod *corev1.Pod) []string {
	var out []string
	for _, s := range pod.Spec.ImagePullSecrets {
		out = append(out, s.Name)
	}
	for _, c := range containers(pod) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				out = append(out, e.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	ref := func(r *corev1.LocalObjectReference) {
		if r != nil {
			out = append(out, r.Name)
		}
	}
	for _, v := range pod.Spec.Volumes {
		s := v.VolumeSource
		switch {
		case s.AzureFile != nil:
			out = append(out, s.AzureFile.SecretName)
		case s.CephFS != nil:
			ref(s.CephFS.SecretRef)
		case s.Cinder != nil:
			ref(s.Cinder.SecretRef)
		case s.FlexVolume != nil:
			ref(s.FlexVolume.SecretRef)
		case s.Projected != nil:
			for _, p := range s.Projected.Sources {
				if p.Secret != nil {
					out = append(out, p.Secret.Name)
				}
			}
		case s.RBD != nil:
			ref(s.RBD.SecretRef)
		case s.Secret != nil:
			out = append(out, s.Secret.SecretName)
		case s.ScaleIO != nil:
			ref(s.ScaleIO.SecretRef)
		case s.ISCSI != nil:
			ref(s.ISCSI.SecretRef)
		case s.StorageOS != nil:
			ref(s.StorageOS.SecretRef)
		case s.CSI != nil:
			ref(s.CSI.NodePublishSecretRef)
		}
	}
	return out
}

// ConfigMaps are the config maps pod names.
func ConfigMaps(pod *corev1.Pod) []string {
	var out []string
	for _, c := range containers(pod) {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				out = append(out, e.ConfigMapRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				out = append(out, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		switch s := v.VolumeSource; {
		case s.ConfigMap != nil:
			out = append(out, s.ConfigMap.Name)
		case s.Projected != nil:
			for _, p := range s.Projected.Sources {
				if p.ConfigMap != nil {
					out = append(out, p.ConfigMap.Name)
				}
			}
		}
	}
	return out
}
