package printers

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

// storageConvertors print storage.k8s.io/v1. CSIStorageCapacities have
// none: kube prints them with the default table.
var storageConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	storageKind("StorageClass"): &TableConvertor[*storagev1.StorageClass]{
		Columns: storageClassColumns, Row: storageClassRow, ListRows: storageClassRows},
	storageKind("CSIDriver"):             New(csiDriverColumns, csiDriverRow),
	storageKind("CSINode"):               New(csiNodeColumns, csiNodeRow),
	storageKind("VolumeAttachment"):      New(volumeAttachmentColumns, volumeAttachmentRow),
	storageKind("VolumeAttributesClass"): New(volumeAttributesClassColumns, volumeAttributesClassRow),
}

func storageKind(kind string) schema.GroupVersionKind {
	return storagev1.SchemeGroupVersion.WithKind(kind)
}

var storageClassColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Provisioner", "string", storagev1.StorageClass{}.SwaggerDoc()["provisioner"]),
	column("ReclaimPolicy", "string", storagev1.StorageClass{}.SwaggerDoc()["reclaimPolicy"]),
	column("VolumeBindingMode", "string", storagev1.StorageClass{}.SwaggerDoc()["volumeBindingMode"]),
	column("AllowVolumeExpansion", "string", storagev1.StorageClass{}.SwaggerDoc()["allowVolumeExpansion"]),
	ageColumn(),
}

// storageClassRow prints one class; only a list marks the default one.
func storageClassRow(sc *storagev1.StorageClass, now time.Time) (metav1.TableRow, error) {
	return storageClassRowNamed(sc, sc.Name, now)
}

func storageClassRowNamed(sc *storagev1.StorageClass, name string, now time.Time) (metav1.TableRow, error) {
	reclaim := corev1.PersistentVolumeReclaimDelete
	if sc.ReclaimPolicy != nil {
		reclaim = *sc.ReclaimPolicy
	}
	binding := storagev1.VolumeBindingImmediate
	if sc.VolumeBindingMode != nil {
		binding = *sc.VolumeBindingMode
	}
	return rowOf(name, sc.Provisioner, string(reclaim), string(binding), deref(sc.AllowVolumeExpansion), since(sc.CreationTimestamp, now))
}

// storageClassRows marks the class that is the default: of those annotated
// as default, the newest, then the first by name.
func storageClassRows(items []*storagev1.StorageClass, now time.Time) ([]metav1.TableRow, error) {
	var def *storagev1.StorageClass
	for _, sc := range items {
		if !isDefaultStorageClass(sc) {
			continue
		}
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&def.CreationTimestamp) && sc.Name < def.Name) {
			def = sc
		}
	}
	rows := make([]metav1.TableRow, len(items))
	for i, sc := range items {
		name := sc.Name
		if def != nil && sc.Name == def.Name {
			name += " (default)"
		}
		rows[i], _ = storageClassRowNamed(sc, name, now)
	}
	return rows, nil
}

func isDefaultStorageClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
}

var csiDriverColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("AttachRequired", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["attachRequired"]),
	column("PodInfoOnMount", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["podInfoOnMount"]),
	column("StorageCapacity", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["storageCapacity"]),
	column("TokenRequests", "string", storagev1.CSIDriverSpec{}.SwaggerDoc()["tokenRequests"]),
	column("RequiresRepublish", "boolean", storagev1.CSIDriverSpec{}.SwaggerDoc()["requiresRepublish"]),
	column("Modes", "string", storagev1.CSIDriverSpec{}.SwaggerDoc()["volumeLifecycleModes"]),
	ageColumn(),
}

func csiDriverRow(d *storagev1.CSIDriver, now time.Time) (metav1.TableRow, error) {
	attach := true
	if d.Spec.AttachRequired != nil {
		attach = *d.Spec.AttachRequired
	}
	tokens := "<unset>"
	if d.Spec.TokenRequests != nil {
		audiences := make([]string, len(d.Spec.TokenRequests))
		for i, t := range d.Spec.TokenRequests {
			audiences[i] = t.Audience
		}
		tokens = strings.Join(audiences, ",")
	}
	modes := make([]string, len(d.Spec.VolumeLifecycleModes))
	for i, m := range d.Spec.VolumeLifecycleModes {
		modes[i] = string(m)
	}
	return rowOf(d.Name, attach, deref(d.Spec.PodInfoOnMount), deref(d.Spec.StorageCapacity), tokens,
		deref(d.Spec.RequiresRepublish), orNone(strings.Join(modes, ",")), since(d.CreationTimestamp, now))
}

var csiNodeColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
	ageColumn(),
}

func csiNodeRow(n *storagev1.CSINode, now time.Time) (metav1.TableRow, error) {
	return rowOf(n.Name, int64(len(n.Spec.Drivers)), since(n.CreationTimestamp, now))
}

var volumeAttachmentColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	{Name: "Attacher", Type: "string", Format: "name", Description: storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["attacher"]},
	column("PV", "string", storagev1.VolumeAttachmentSource{}.SwaggerDoc()["persistentVolumeName"]),
	column("Node", "string", storagev1.VolumeAttachmentSpec{}.SwaggerDoc()["nodeName"]),
	column("Attached", "boolean", storagev1.VolumeAttachmentStatus{}.SwaggerDoc()["attached"]),
	ageColumn(),
}

func volumeAttachmentRow(va *storagev1.VolumeAttachment, now time.Time) (metav1.TableRow, error) {
	return rowOf(va.Name, va.Spec.Attacher, deref(va.Spec.Source.PersistentVolumeName), va.Spec.NodeName,
		va.Status.Attached, since(va.CreationTimestamp, now))
}

var volumeAttributesClassColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("DriverName", "string", storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]),
	ageColumn(),
}

func volumeAttributesClassRow(c *storagev1.VolumeAttributesClass, now time.Time) (metav1.TableRow, error) {
	return rowOf(c.Name, c.DriverName, since(c.CreationTimestamp, now))
}
