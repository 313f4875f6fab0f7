package node

import (
	corev1 "k8s.io/api/core/v1"
)

// The kinds of objects a node may reach, as keys of the graph's index.
const (
	kindPod            = "pod"
	kindSecret         = "secret"
	kindConfigMap      = "configmap"
	kindPVC            = "persistentvolumeclaim"
	kindPV             = "persistentvolume"
	kindServiceAccount = "serviceaccount"
	kindResourceClaim  = "resourceclaim"
	kindVA             = "volumeattachment"
	kindResourceSlice  = "resourceslice"
)

// ref names one object: the key the graph indexes pods and volumes by.
func ref(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// podRefs are the objects a pod bound to a node makes readable by it: its
// service account, the secrets and config maps of its image pull secrets,
// containers (env and envFrom, every kind of container) and volumes, its
// claims (persistent, ephemeral and resource claims). A mirror pod, which a
// kubelet creates for a static pod, makes nothing readable: its node wrote
// it and could name anything in it.
func podRefs(pod *corev1.Pod) []string {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil
	}
	ns := pod.Namespace
	var out []string
	add := func(kind, name string) {
		if name != "" {
			out = append(out, ref(kind, ns, name))
		}
	}
	add(kindServiceAccount, pod.Spec.ServiceAccountName)
	for _, s := range pod.Spec.ImagePullSecrets {
		add(kindSecret, s.Name)
	}
	visitContainers(&pod.Spec, func(c *corev1.Container) {
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				add(kindSecret, e.SecretRef.Name)
			}
			if e.ConfigMapRef != nil {
				add(kindConfigMap, e.ConfigMapRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add(kindSecret, e.ValueFrom.SecretKeyRef.Name)
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add(kindConfigMap, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		add(kindSecret, volumeSecret(&v.VolumeSource))
		switch {
		case v.ConfigMap != nil:
			add(kindConfigMap, v.ConfigMap.Name)
		case v.Projected != nil:
			for _, p := range v.Projected.Sources {
				if p.Secret != nil {
					add(kindSecret, p.Secret.Name)
				}
				if p.ConfigMap != nil {
					add(kindConfigMap, p.ConfigMap.Name)
				}
			}
		case v.PersistentVolumeClaim != nil:
			add(kindPVC, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			// The ephemeral volume controller names the claim after the pod
			// and the volume.
			add(kindPVC, pod.Name+"-"+v.Name)
		}
	}
	for _, c := range podResourceClaims(pod) {
		add(kindResourceClaim, c)
	}
	return out
}

// visitContainers calls f on every container of spec: init, regular and
// ephemeral ones.
func visitContainers(spec *corev1.PodSpec, f func(*corev1.Container)) {
	for i := range spec.InitContainers {
		f(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		f(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		f((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

// volumeSecret is the secret a pod volume of a secret-taking kind names.
func volumeSecret(s *corev1.VolumeSource) string {
	switch {
	case s.Secret != nil:
		return s.Secret.SecretName
	case s.AzureFile != nil:
		return s.AzureFile.SecretName
	case s.CephFS != nil && s.CephFS.SecretRef != nil:
		return s.CephFS.SecretRef.Name
	case s.Cinder != nil && s.Cinder.SecretRef != nil:
		return s.Cinder.SecretRef.Name
	case s.FlexVolume != nil && s.FlexVolume.SecretRef != nil:
		return s.FlexVolume.SecretRef.Name
	case s.RBD != nil && s.RBD.SecretRef != nil:
		return s.RBD.SecretRef.Name
	case s.ScaleIO != nil && s.ScaleIO.SecretRef != nil:
		return s.ScaleIO.SecretRef.Name
	case s.ISCSI != nil && s.ISCSI.SecretRef != nil:
		return s.ISCSI.SecretRef.Name
	case s.StorageOS != nil && s.StorageOS.SecretRef != nil:
		return s.StorageOS.SecretRef.Name
	case s.CSI != nil && s.CSI.NodePublishSecretRef != nil:
		return s.CSI.NodePublishSecretRef.Name
	}
	return ""
}

// podResourceClaims are the names of the ResourceClaims a pod uses: named
// directly, or generated from a template and recorded in its status.
func podResourceClaims(pod *corev1.Pod) []string {
	var out []string
	for _, c := range pod.Spec.ResourceClaims {
		if c.ResourceClaimName != nil {
			out = append(out, *c.ResourceClaimName)
			continue
		}
		for _, s := range pod.Status.ResourceClaimStatuses {
			if s.Name == c.Name && s.ResourceClaimName != nil {
				out = append(out, *s.ResourceClaimName)
			}
		}
	}
	if s := pod.Status.ExtendedResourceClaimStatus; s != nil && s.ResourceClaimName != "" {
		out = append(out, s.ResourceClaimName)
	}
	return out
}

// pvSecretRefs are the secrets a bound persistent volume makes readable by
// the nodes its claim's pods run on: those the kubelet needs to mount it
// (not the CSI controller's). A secret without a namespace lives in the
// claim's.
func pvSecretRefs(pv *corev1.PersistentVolume) []string {
	if pv.Spec.ClaimRef == nil {
		return nil
	}
	claimNS := pv.Spec.ClaimRef.Namespace
	var out []string
	add := func(ns, name string) {
		if name == "" {
			return
		}
		if ns == "" {
			ns = claimNS
		}
		out = append(out, ref(kindSecret, ns, name))
	}
	s := &pv.Spec.PersistentVolumeSource
	secretRef := func(r *corev1.SecretReference) {
		if r != nil {
			add(r.Namespace, r.Name)
		}
	}
	switch {
	case s.AzureFile != nil:
		ns := ""
		if s.AzureFile.SecretNamespace != nil {
			ns = *s.AzureFile.SecretNamespace
		}
		add(ns, s.AzureFile.SecretName)
	case s.CephFS != nil:
		secretRef(s.CephFS.SecretRef)
	case s.Cinder != nil && s.Cinder.SecretRef != nil:
		// kube takes Cinder's and StorageOS's namespaces as written.
		out = append(out, ref(kindSecret, s.Cinder.SecretRef.Namespace, s.Cinder.SecretRef.Name))
	case s.FlexVolume != nil:
		secretRef(s.FlexVolume.SecretRef)
	case s.RBD != nil:
		secretRef(s.RBD.SecretRef)
	case s.ScaleIO != nil:
		secretRef(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		secretRef(s.ISCSI.SecretRef)
	case s.StorageOS != nil && s.StorageOS.SecretRef != nil:
		out = append(out, ref(kindSecret, s.StorageOS.SecretRef.Namespace, s.StorageOS.SecretRef.Name))
	case s.CSI != nil:
		// CSI references carry their namespace.
		for _, r := range []*corev1.SecretReference{s.CSI.NodePublishSecretRef, s.CSI.NodeStageSecretRef, s.CSI.NodeExpandSecretRef} {
			if r != nil {
				out = append(out, ref(kindSecret, r.Namespace, r.Name))
			}
		}
	}
	return out
}
