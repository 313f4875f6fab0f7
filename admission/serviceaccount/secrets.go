package serviceaccount

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/admission/internal/podrefs"
)

func refersToSecrets(pod *corev1.Pod) bool { return len(podrefs.Secrets(pod)) > 0 }

func mountable(sa *corev1.ServiceAccount, name string) bool {
	return slices.ContainsFunc(sa.Secrets, func(r corev1.ObjectReference) bool { return r.Name == name })
}

// limitSecretReferences refuses secret volumes, secret environment and
// pull secrets the enforcing account does not list, with kube's messages.
func limitSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && !mountable(sa, v.Secret.SecretName) {
			return fmt.Errorf("volume with secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", v.Secret.SecretName, sa.Name)
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if err := limitEnv(sa, "init container", c.Name, c.Env, c.EnvFrom); err != nil {
			return err
		}
	}
	for _, c := range pod.Spec.Containers {
		if err := limitEnv(sa, "container", c.Name, c.Env, c.EnvFrom); err != nil {
			return err
		}
	}
	for i, ref := range pod.Spec.ImagePullSecrets {
		if !slices.ContainsFunc(sa.ImagePullSecrets, func(r corev1.LocalObjectReference) bool { return r.Name == ref.Name }) {
			return fmt.Errorf(`imagePullSecrets[%d].name="%s" is not allowed because service account %s does not reference that imagePullSecret`, i, ref.Name, sa.Name)
		}
	}
	return nil
}

func limitEphemeralSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	for _, c := range pod.Spec.EphemeralContainers {
		if err := limitEnv(sa, "ephemeral container", c.Name, c.Env, c.EnvFrom); err != nil {
			return err
		}
	}
	return nil
}

func limitEnv(sa *corev1.ServiceAccount, what, container string, env []corev1.EnvVar, envFrom []corev1.EnvFromSource) error {
	for _, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !mountable(sa, e.ValueFrom.SecretKeyRef.Name) {
			return fmt.Errorf("%s %s with envVar %s referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", what, container, e.Name, e.ValueFrom.SecretKeyRef.Name, sa.Name)
		}
	}
	for _, e := range envFrom {
		if e.SecretRef != nil && !mountable(sa, e.SecretRef.Name) {
			return fmt.Errorf("%s %s with envFrom referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", what, container, e.SecretRef.Name, sa.Name)
		}
	}
	return nil
}
