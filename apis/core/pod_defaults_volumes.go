package core

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// defaultVolume applies kube's defaults to a pod volume: a volume without
// a source is an emptyDir, and each source has its own defaults.
func defaultVolume(v *corev1.Volume) {
	src := &v.VolumeSource
	if allPointersNil(src) {
		src.EmptyDir = &corev1.EmptyDirVolumeSource{}
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = ptr(corev1.HostPathUnset)
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = ptr(corev1.SecretVolumeSourceDefaultMode)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = ptr(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if src.DownwardAPI != nil {
		if src.DownwardAPI.DefaultMode == nil {
			src.DownwardAPI.DefaultMode = ptr(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		for i := range src.DownwardAPI.Items {
			defaultFieldRef(src.DownwardAPI.Items[i].FieldRef)
		}
	}
	if src.Projected != nil {
		defaultProjected(src.Projected)
	}
	if src.Image != nil && src.Image.PullPolicy == "" {
		src.Image.PullPolicy = pullPolicyFor(src.Image.Reference)
	}
	if src.Ephemeral != nil && src.Ephemeral.VolumeClaimTemplate != nil {
		spec := &src.Ephemeral.VolumeClaimTemplate.Spec
		if spec.VolumeMode == nil {
			spec.VolumeMode = ptr(corev1.PersistentVolumeFilesystem)
		}
		roundResourceList(spec.Resources.Limits)
		roundResourceList(spec.Resources.Requests)
	}
	defaultLegacyVolume(src)
}

func defaultProjected(p *corev1.ProjectedVolumeSource) {
	if p.DefaultMode == nil {
		p.DefaultMode = ptr(corev1.ProjectedVolumeSourceDefaultMode)
	}
	for i := range p.Sources {
		s := &p.Sources[i]
		if s.DownwardAPI != nil {
			for j := range s.DownwardAPI.Items {
				defaultFieldRef(s.DownwardAPI.Items[j].FieldRef)
			}
		}
		if s.ServiceAccountToken != nil && s.ServiceAccountToken.ExpirationSeconds == nil {
			s.ServiceAccountToken.ExpirationSeconds = ptr[int64](3600)
		}
	}
}

// defaultLegacyVolume applies the defaults of the in-tree volume plugins
// kube still describes in its API.
func defaultLegacyVolume(src *corev1.VolumeSource) {
	if src.ISCSI != nil && src.ISCSI.ISCSIInterface == "" {
		src.ISCSI.ISCSIInterface = "default"
	}
	if rbd := src.RBD; rbd != nil {
		rbd.RBDPool = orDefault(rbd.RBDPool, "rbd")
		rbd.RadosUser = orDefault(rbd.RadosUser, "admin")
		rbd.Keyring = orDefault(rbd.Keyring, "/etc/ceph/keyring")
	}
	if az := src.AzureDisk; az != nil {
		if az.CachingMode == nil {
			az.CachingMode = ptr(corev1.AzureDataDiskCachingReadWrite)
		}
		if az.FSType == nil {
			az.FSType = ptr("ext4")
		}
		if az.ReadOnly == nil {
			az.ReadOnly = ptr(false)
		}
		if az.Kind == nil {
			az.Kind = ptr(corev1.AzureSharedBlobDisk)
		}
	}
	if sio := src.ScaleIO; sio != nil {
		sio.StorageMode = orDefault(sio.StorageMode, "ThinProvisioned")
		sio.FSType = orDefault(sio.FSType, "xfs")
	}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// allPointersNil reports whether every pointer field of the struct *v is
// nil: a volume source that names no source.
func allPointersNil(v *corev1.VolumeSource) bool {
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			return false
		}
	}
	return true
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
