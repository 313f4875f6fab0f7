package storage

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

var ctx = context.Background()

func check(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = string(e.Type) + " " + e.Field
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("errors = %v\nwant     %v\n(%v)", got, want, errs)
	}
}

func class() *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "csi.example.com",
		Parameters: map[string]string{"type": "ssd"}}
	StorageClassStrategy{}.Default(sc)
	return sc
}

func TestStorageClass(t *testing.T) {
	sc := class()
	if *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		t.Fatalf("defaults: %+v", sc)
	}
	check(t, StorageClassStrategy{}.Validate(ctx, sc))

	bad := class()
	bad.Provisioner = "a b"
	bad.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRecycle)
	bad.VolumeBindingMode = ptr.To[storagev1.VolumeBindingMode]("Later")
	bad.Parameters[""] = "x"
	term := corev1.TopologySelectorTerm{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
		{Key: "failure-domain.beta.kubernetes.io/zone", Values: []string{"a", "a"}}}}
	bad.AllowedTopologies = []corev1.TopologySelectorTerm{term, term}
	check(t, StorageClassStrategy{}.Validate(ctx, bad),
		"FieldValueInvalid provisioner", "FieldValueNotSupported reclaimPolicy", "FieldValueNotSupported volumeBindingMode",
		"FieldValueInvalid parameters", "FieldValueDuplicate allowedTopologies[0].matchLabelExpressions[0].values[1]",
		"FieldValueDuplicate allowedTopologies[1].matchLabelExpressions[0].values[1]", "FieldValueDuplicate allowedTopologies[1].matchLabelExpressions")
	if w := (StorageClassStrategy{}).WarningsOnCreate(ctx, bad); len(w) != 2 || !strings.Contains(w[0], "deprecated since v1.17") {
		t.Errorf("warnings = %v", w)
	}
	// kube compares the terms with a list that starts with empty entries.
	empty := class()
	empty.AllowedTopologies = []corev1.TopologySelectorTerm{{}}
	check(t, StorageClassStrategy{}.Validate(ctx, empty), "FieldValueDuplicate allowedTopologies[0].matchLabelExpressions")

	upd := class()
	upd.Provisioner, upd.Parameters = "other.example.com", nil
	upd.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRetain)
	check(t, StorageClassStrategy{}.ValidateUpdate(ctx, upd, class()),
		"FieldValueInvalid provisioner", "FieldValueInvalid parameters", "FieldValueInvalid reclaimPolicy")
}

func TestCSIDriver(t *testing.T) {
	d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}}
	CSIDriverStrategy{}.Default(d)
	s := d.Spec
	if !*s.AttachRequired || *s.PodInfoOnMount || *s.StorageCapacity || *s.RequiresRepublish || *s.SELinuxMount ||
		*s.PreventPodSchedulingIfMissing || *s.FSGroupPolicy != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy ||
		!slices.Equal(s.VolumeLifecycleModes, []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}) {
		t.Fatalf("defaults: %+v", s)
	}
	check(t, CSIDriverStrategy{}.Validate(ctx, d))
	check(t, CSIDriverStrategy{}.Validate(ctx, &storagev1.CSIDriver{}), "FieldValueRequired spec.attachedRequired",
		"FieldValueRequired spec.podInfoOnMount", "FieldValueRequired spec.storageCapacity", "FieldValueRequired spec.seLinuxMount",
		"FieldValueRequired spec.preventPodSchedulingIfMissing")

	bad := d.DeepCopy()
	bad.Spec.FSGroupPolicy = ptr.To[storagev1.FSGroupPolicy]("Sometimes")
	bad.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{"Forever"}
	bad.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "a", ExpirationSeconds: ptr.To[int64](60)}, {Audience: "a"}}
	bad.Spec.NodeAllocatableUpdatePeriodSeconds = ptr.To[int64](5)
	bad.Spec.AttachRequired = ptr.To(false)
	check(t, CSIDriverStrategy{}.ValidateUpdate(ctx, bad, d), "FieldValueNotSupported spec.fsGroupPolicy",
		"FieldValueNotSupported spec.volumeLifecycleModes", "FieldValueInvalid spec.tokenRequests[0].expirationSeconds",
		"FieldValueDuplicate spec.tokenRequests[1].audience", "FieldValueInvalid spec.nodeAllocatableUpdatePeriodSeconds",
		"FieldValueInvalid spec.attachedRequired", "FieldValueInvalid spec.volumeLifecycleModes")
	if w := (CSIDriverStrategy{}).WarningsOnCreate(ctx, bad); len(w) != 1 {
		t.Errorf("warnings = %v", w)
	}
	CSIDriverStrategy{}.PrepareForUpdate(ctx, bad, d)
	if bad.Generation != 1 {
		t.Errorf("generation = %d", bad.Generation)
	}
}

func TestCSINode(t *testing.T) {
	n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: "csi.example.com", NodeID: "id-1", TopologyKeys: []string{"topology.example.com/zone"},
			Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](10)}},
	}}}
	check(t, CSINodeStrategy{}.Validate(ctx, n))
	bad := n.DeepCopy()
	bad.Spec.Drivers = append(bad.Spec.Drivers, storagev1.CSINodeDriver{Name: "csi.example.com", TopologyKeys: []string{"", "a b"}})
	check(t, CSINodeStrategy{}.Validate(ctx, bad), "FieldValueRequired spec.drivers[1].nodeID", "FieldValueDuplicate spec.drivers[1].name",
		"FieldValueRequired spec.drivers[1]", "FieldValueInvalid spec.drivers[1]", "FieldValueInvalid spec.drivers[1]", "FieldValueInvalid spec.drivers[1]")

	upd := n.DeepCopy()
	upd.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](20)
	check(t, CSINodeStrategy{}.ValidateUpdate(ctx, upd, n))
	upd.Spec.Drivers[0].NodeID = "id-2"
	check(t, CSINodeStrategy{}.ValidateUpdate(ctx, upd, n), "FieldValueInvalid spec.drivers")

	st := n.DeepCopy()
	st.Labels = map[string]string{"a": "b"}
	st.Status.StorageHealth = []storagev1.StorageHealth{{Name: "csi.example.com"}}
	CSINodeStatusStrategy{}.PrepareForUpdate(ctx, st, n)
	if st.Labels != nil || st.Status.StorageHealth != nil {
		t.Fatalf("status update kept metadata or storage health: %+v", st)
	}
}

func TestCSIStorageCapacity(t *testing.T) {
	c := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}, StorageClassName: "fast",
		NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{"beta.kubernetes.io/os": "linux"}}, Capacity: ptr.To(resource.MustParse("1Gi"))}
	check(t, CSIStorageCapacityStrategy{}.Validate(ctx, c))
	if w := (CSIStorageCapacityStrategy{}).WarningsOnCreate(ctx, c); len(w) != 1 || !strings.HasPrefix(w[0], "nodeTopology.matchLabels.beta.kubernetes.io/os:") {
		t.Errorf("warnings = %v", w)
	}
	bad := c.DeepCopy()
	bad.StorageClassName, bad.Capacity = "", ptr.To(resource.MustParse("-1"))
	bad.NodeTopology = nil
	check(t, CSIStorageCapacityStrategy{}.ValidateUpdate(ctx, bad, c), "FieldValueInvalid storageClassName", "FieldValueInvalid capacity",
		"FieldValueInvalid nodeTopology", "FieldValueInvalid storageClassName")
}

func TestVolumeAttachment(t *testing.T) {
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"}, Spec: storagev1.VolumeAttachmentSpec{
		Attacher: "csi.example.com", NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}}}
	check(t, VolumeAttachmentStrategy{}.Validate(ctx, va))
	bad := va.DeepCopy()
	bad.Spec = storagev1.VolumeAttachmentSpec{NodeName: "N_1", Source: storagev1.VolumeAttachmentSource{
		InlineVolumeSpec: &corev1.PersistentVolumeSpec{StorageClassName: "x"}}}
	check(t, VolumeAttachmentStrategy{}.Validate(ctx, bad), "FieldValueRequired spec.attacher", "FieldValueInvalid spec.nodeName",
		"FieldValueRequired spec.source.inlineVolumeSpec.csi", "FieldValueRequired spec.source.inlineVolumeSpec.accessModes",
		"FieldValueRequired spec.source.inlineVolumeSpec", "FieldValueForbidden spec.source.inlineVolumeSpec.storageClassName")
	check(t, VolumeAttachmentStrategy{}.ValidateUpdate(ctx, bad, va), "FieldValueRequired spec.attacher", "FieldValueInvalid spec.nodeName",
		"FieldValueRequired spec.source.inlineVolumeSpec.csi", "FieldValueRequired spec.source.inlineVolumeSpec.accessModes",
		"FieldValueRequired spec.source.inlineVolumeSpec", "FieldValueForbidden spec.source.inlineVolumeSpec.storageClassName",
		"FieldValueInvalid spec")

	st := va.DeepCopy()
	st.Spec.NodeName = "n2"
	st.Status = storagev1.VolumeAttachmentStatus{Attached: true, AttachError: &storagev1.VolumeError{ErrorCode: ptr.To[int32](-1)}}
	VolumeAttachmentStatusStrategy{}.PrepareForUpdate(ctx, st, va)
	if st.Spec.NodeName != "n1" || !st.Status.Attached {
		t.Fatalf("status update: %+v", st)
	}
	check(t, VolumeAttachmentStatusStrategy{}.ValidateUpdate(ctx, st, va), "FieldValueInvalid status.attachError.errorCode")
	VolumeAttachmentStrategy{}.PrepareForCreate(ctx, st)
	if st.Status.Attached {
		t.Fatal("create kept the status")
	}
}
