package printers

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// betaStorageClassAnnotation names a volume's class before storageClassName
// did, and still wins over it.
const betaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class"

var persistentVolumeColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Capacity", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]),
	column("Access Modes", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]),
	column("Reclaim Policy", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]),
	column("Status", "string", corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]),
	column("Claim", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]),
	column("StorageClass", "string", "StorageClass of the pv"),
	column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
	column("Reason", "string", corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]),
	ageColumn(),
	wideColumn("VolumeMode", "string", corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]),
}

func persistentVolumeRow(pv *corev1.PersistentVolume, now time.Time) (metav1.TableRow, error) {
	claim := ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		claim = ref.Namespace + "/" + ref.Name
	}
	size := pv.Spec.Capacity[corev1.ResourceStorage]
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class, ok := pv.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = pv.Spec.StorageClassName
	}
	return rowOf(pv.Name, size.String(), accessModes(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, unsetOr(pv.Spec.VolumeAttributesClassName), pv.Status.Reason, since(pv.CreationTimestamp, now),
		volumeMode(pv.Spec.VolumeMode))
}

var persistentVolumeClaimColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Status", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]),
	column("Volume", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]),
	column("Capacity", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]),
	column("Access Modes", "string", corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]),
	column("StorageClass", "string", "StorageClass of the pvc"),
	column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
	ageColumn(),
	wideColumn("VolumeMode", "string", corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]),
}

// persistentVolumeClaimRow shows the capacity and access modes of the bound
// volume only.
func persistentVolumeClaimRow(pvc *corev1.PersistentVolumeClaim, now time.Time) (metav1.TableRow, error) {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		size := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity, modes = size.String(), accessModes(pvc.Status.AccessModes)
	}
	class, ok := pvc.Annotations[betaStorageClassAnnotation]
	if !ok {
		class = deref(pvc.Spec.StorageClassName)
	}
	return rowOf(pvc.Name, phase, pvc.Spec.VolumeName, capacity, modes, class, unsetOr(pvc.Spec.VolumeAttributesClassName),
		since(pvc.CreationTimestamp, now), volumeMode(pvc.Spec.VolumeMode))
}

// accessModes abbreviates access modes (RWO,ROX,RWX,RWOP), in that order.
func accessModes(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range []struct {
		mode  corev1.PersistentVolumeAccessMode
		short string
	}{
		{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"},
		{corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"},
	} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

func volumeMode(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

// unsetOr is *s, or "<unset>" when s is nil.
func unsetOr(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}
