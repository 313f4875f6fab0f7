package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// PersistentVolumeStrategy is the strategy of the persistentvolumes
// resource.
type PersistentVolumeStrategy struct{}

var (
	_ registry.Strategy         = PersistentVolumeStrategy{}
	_ registry.Defaulter        = PersistentVolumeStrategy{}
	_ registry.FieldSelectable  = PersistentVolumeStrategy{}
	_ registry.WarningsOnCreate = PersistentVolumeStrategy{}
	_ registry.WarningsOnUpdate = PersistentVolumeStrategy{}
)

// NamespaceScoped is false: volumes are cluster scoped.
func (PersistentVolumeStrategy) NamespaceScoped() bool { return false }

// Default applies kube's volume defaults.
func (PersistentVolumeStrategy) Default(obj runtime.Object) {
	DefaultPersistentVolume(obj.(*corev1.PersistentVolume))
}

// DefaultPersistentVolume applies kube's defaults: a Pending phase, the
// Retain reclaim policy, the Filesystem mode, and those of the volume
// source.
func DefaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = ptr(corev1.PersistentVolumeFilesystem)
	}
	roundResourceList(pv.Spec.Capacity)
	defaultPersistentVolumeSource(&pv.Spec.PersistentVolumeSource)
}

func defaultPersistentVolumeSource(src *corev1.PersistentVolumeSource) {
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = ptr(corev1.HostPathUnset)
	}
	if rbd := src.RBD; rbd != nil {
		rbd.RBDPool = orDefault(rbd.RBDPool, "rbd")
		rbd.RadosUser = orDefault(rbd.RadosUser, "admin")
		rbd.Keyring = orDefault(rbd.Keyring, "/etc/ceph/keyring")
	}
	if src.ISCSI != nil {
		src.ISCSI.ISCSIInterface = orDefault(src.ISCSI.ISCSIInterface, "default")
	}
	if sio := src.ScaleIO; sio != nil {
		sio.StorageMode = orDefault(sio.StorageMode, "ThinProvisioned")
		sio.FSType = orDefault(sio.FSType, "xfs")
	}
	// Azure disks are the one source whose type pods share.
	defaultLegacyVolume(&corev1.VolumeSource{AzureDisk: src.AzureDisk})
}

// PrepareForCreate starts the volume Pending, with a fresh status.
func (PersistentVolumeStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pv := obj.(*corev1.PersistentVolume)
	now := metav1.Now()
	pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
}

// PrepareForUpdate keeps the status, which changes through
// persistentvolumes/status.
func (PersistentVolumeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.PersistentVolume).Status = old.(*corev1.PersistentVolume).Status
}

// Validate validates a new volume.
func (PersistentVolumeStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidatePersistentVolume(obj.(*corev1.PersistentVolume))
}

// ValidateUpdate validates an update: the source is immutable.
func (PersistentVolumeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidatePersistentVolumeUpdate(obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume))
}

// WarningsOnCreate warns of deprecated annotations and reclaim policy.
func (PersistentVolumeStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return persistentVolumeWarnings(obj.(*corev1.PersistentVolume))
}

// WarningsOnUpdate is WarningsOnCreate.
func (PersistentVolumeStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return persistentVolumeWarnings(obj.(*corev1.PersistentVolume))
}

func persistentVolumeWarnings(pv *corev1.PersistentVolume) []string {
	var out []string
	annotations := field.NewPath("metadata", "annotations")
	if _, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		out = append(out, fmt.Sprintf("%s: %s", annotations.Key(corev1.BetaStorageClassAnnotation),
			`deprecated since v1.8; use "storageClassName" attribute instead`))
	}
	if _, ok := pv.Annotations[corev1.MountOptionAnnotation]; ok {
		out = append(out, fmt.Sprintf("%s: %s", annotations.Key(corev1.MountOptionAnnotation),
			`deprecated since v1.31; use "mountOptions" attribute instead`))
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRecycle {
		out = append(out, "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. "+
			"Instead, the recommended approach is to use dynamic provisioning.")
	}
	return out
}

// Fields returns name, kube's legacy alias of metadata.name for volumes.
func (PersistentVolumeStrategy) Fields(obj runtime.Object) fields.Set {
	return fields.Set{"name": obj.(*corev1.PersistentVolume).Name}
}

// PersistentVolumeStatusStrategy is the strategy of
// persistentvolumes/status: an update changes the status only, and records
// when the phase changed.
type PersistentVolumeStatusStrategy struct{ PersistentVolumeStrategy }

// PrepareForUpdate keeps the spec of old and keeps lastPhaseTransitionTime
// true: carried over while the phase stays, set to now when it changes
// unless the client set a new one.
func (PersistentVolumeStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pv, oldPV := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
	pv.Spec = oldPV.Spec
	s, oldS := &pv.Status, &oldPV.Status
	switch {
	case s.Phase == oldS.Phase && s.LastPhaseTransitionTime == nil:
		s.LastPhaseTransitionTime = oldS.LastPhaseTransitionTime
	case s.Phase != oldS.Phase && (s.LastPhaseTransitionTime == nil || s.LastPhaseTransitionTime.Equal(oldS.LastPhaseTransitionTime)):
		now := metav1.Now()
		s.LastPhaseTransitionTime = &now
	}
}

// ValidateUpdate has nothing to check beyond metadata: any status goes.
func (PersistentVolumeStatusStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}

// WarningsOnUpdate has nothing to say of a status.
func (PersistentVolumeStatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
