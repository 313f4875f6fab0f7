package core

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func hostPathPV() *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
		},
	}
}

func TestValidatePersistentVolume(t *testing.T) {
	affinity := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}},
	}}}}
	tests := []struct {
		name   string
		mutate func(pv *corev1.PersistentVolume)
		want   []wantErr
	}{
		{"valid", func(*corev1.PersistentVolume) {}, nil},
		{"no source", func(pv *corev1.PersistentVolume) { pv.Spec.HostPath = nil }, []wantErr{req("spec")}},
		{"two sources", func(pv *corev1.PersistentVolume) { pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "s", Path: "/p"} },
			[]wantErr{forb("spec.nfs")}},
		{"no capacity", func(pv *corev1.PersistentVolume) { pv.Spec.Capacity = nil },
			[]wantErr{req("spec.capacity"), notSupportedAt("spec.capacity")}},
		{"zero capacity", func(pv *corev1.PersistentVolume) { pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("0") },
			[]wantErr{inv("spec.capacity[storage]")}},
		{"cpu capacity", func(pv *corev1.PersistentVolume) { pv.Spec.Capacity[corev1.ResourceCPU] = resource.MustParse("1") },
			[]wantErr{notSupportedAt("spec.capacity")}},
		{"no access modes", func(pv *corev1.PersistentVolume) { pv.Spec.AccessModes = nil }, []wantErr{req("spec.accessModes")}},
		{"bad access mode", func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"Sometimes"}
		},
			[]wantErr{notSupportedAt("spec.accessModes")}},
		{"rwop with rwo", func(pv *corev1.PersistentVolume) {
			pv.Spec.AccessModes = append(pv.Spec.AccessModes, corev1.ReadWriteOncePod)
		},
			[]wantErr{forb("spec.accessModes")}},
		{"reclaim policy", func(pv *corev1.PersistentVolume) { pv.Spec.PersistentVolumeReclaimPolicy = "Keep" },
			[]wantErr{notSupportedAt("spec.persistentVolumeReclaimPolicy")}},
		{"recycle root", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath.Path, pv.Spec.PersistentVolumeReclaimPolicy = "/", corev1.PersistentVolumeReclaimRecycle
		}, []wantErr{forb("spec.persistentVolumeReclaimPolicy")}},
		{"host path backsteps", func(pv *corev1.PersistentVolume) { pv.Spec.HostPath.Path = "/a/../b" }, []wantErr{inv("spec.hostPath.path")}},
		{"local without affinity", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.Local = nil, &corev1.LocalVolumeSource{Path: "/mnt"}
		}, []wantErr{req("spec.nodeAffinity")}},
		{"local", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.Local, pv.Spec.NodeAffinity = nil, &corev1.LocalVolumeSource{Path: "/mnt"}, affinity
		}, nil},
		{"empty affinity", func(pv *corev1.PersistentVolume) { pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{} },
			[]wantErr{req("spec.nodeAffinity.required")}},
		{"csi", func(pv *corev1.PersistentVolume) {
			pv.Spec.HostPath, pv.Spec.CSI = nil, &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com",
				NodePublishSecretRef: &corev1.SecretReference{Name: "s"}}
		}, []wantErr{req("spec.csi.volumeHandle"), req("spec.csi.nodePublishSecretRef.namespace")}},
		{"class and mode", func(pv *corev1.PersistentVolume) {
			pv.Spec.StorageClassName, pv.Spec.VolumeMode = "Fast", ptr[corev1.PersistentVolumeMode]("Raw")
		}, []wantErr{inv("spec.storageClassName"), notSupportedAt("spec.volumeMode")}},
		{"attributes class without csi", func(pv *corev1.PersistentVolume) { pv.Spec.VolumeAttributesClassName = ptr("") },
			[]wantErr{req("spec.volumeAttributesClassName"), req("spec.csi")}},
		{"mount options", func(pv *corev1.PersistentVolume) {
			pv.Annotations = map[string]string{corev1.MountOptionAnnotation: "ro"}
		}, []wantErr{forb("metadata.annotations.volume.beta.kubernetes.io/mount-options")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pv := hostPathPV()
			tt.mutate(pv)
			checkErrs(t, PersistentVolumeStrategy{}.Validate(context.Background(), pv), tt.want...)
		})
	}
}

func TestPersistentVolumeUpdateAndDefaults(t *testing.T) {
	ctx := context.Background()
	old := hostPathPV()
	DefaultPersistentVolume(old)
	if old.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *old.Spec.VolumeMode != corev1.PersistentVolumeFilesystem ||
		old.Status.Phase != corev1.VolumePending || *old.Spec.HostPath.Type != corev1.HostPathUnset {
		t.Fatalf("defaults: %+v", old)
	}
	pv := old.DeepCopy()
	pv.Spec.HostPath.Path = "/other"
	checkErrs(t, PersistentVolumeStrategy{}.ValidateUpdate(ctx, pv, old), forb("spec.persistentvolumesource"))
	pv = old.DeepCopy()
	pv.Spec.VolumeMode = ptr(corev1.PersistentVolumeBlock)
	checkErrs(t, PersistentVolumeStrategy{}.ValidateUpdate(ctx, pv, old), inv("volumeMode"))
	pv = old.DeepCopy()
	pv.Spec.Capacity[corev1.ResourceStorage] = resource.MustParse("2Gi")
	checkErrs(t, PersistentVolumeStrategy{}.ValidateUpdate(ctx, pv, old))

	PersistentVolumeStrategy{}.PrepareForCreate(ctx, old)
	if old.Status.Phase != corev1.VolumePending || old.Status.LastPhaseTransitionTime == nil {
		t.Fatalf("create status: %+v", old.Status)
	}
	st := old.DeepCopy()
	st.Status.Phase, st.Status.LastPhaseTransitionTime = corev1.VolumeBound, nil
	st.Spec.StorageClassName = "x"
	PersistentVolumeStatusStrategy{}.PrepareForUpdate(ctx, st, old)
	if st.Spec.StorageClassName != "" || st.Status.LastPhaseTransitionTime == nil {
		t.Errorf("status update: spec %+v transition %v", st.Spec, st.Status.LastPhaseTransitionTime)
	}
	same := old.DeepCopy()
	same.Status.LastPhaseTransitionTime = nil
	PersistentVolumeStatusStrategy{}.PrepareForUpdate(ctx, same, old)
	if !same.Status.LastPhaseTransitionTime.Equal(old.Status.LastPhaseTransitionTime) {
		t.Errorf("unchanged phase lost its transition time")
	}
}
