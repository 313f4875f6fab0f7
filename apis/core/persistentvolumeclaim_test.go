package core

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func claim(size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

func TestValidatePersistentVolumeClaim(t *testing.T) {
	snapshots := ptr("snapshot.storage.k8s.io")
	tests := []struct {
		name   string
		mutate func(c *corev1.PersistentVolumeClaim)
		want   []wantErr
	}{
		{"valid", func(*corev1.PersistentVolumeClaim) {}, nil},
		{"no access modes", func(c *corev1.PersistentVolumeClaim) { c.Spec.AccessModes = nil }, []wantErr{req("spec.accessModes")}},
		{"no storage", func(c *corev1.PersistentVolumeClaim) { c.Spec.Resources.Requests = nil }, []wantErr{req("spec.resources[storage]")}},
		{"zero storage", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		},
			[]wantErr{inv("spec.resources[storage]")}},
		{"snapshot source", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: snapshots, Kind: "VolumeSnapshot", Name: "s"}
		}, nil},
		{"core source not a claim", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "Pod", Name: "p"}
		}, []wantErr{inv("spec.dataSource")}},
		{"source mismatch", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "a"}
			c.Spec.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "b"}
		}, []wantErr{inv("spec")}},
		{"cross namespace with source", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "a"}
			c.Spec.DataSourceRef = &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: "a", Namespace: ptr("other")}
		}, []wantErr{inv("spec")}},
		{"ref without name", func(c *corev1.PersistentVolumeClaim) {
			c.Spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: snapshots, Kind: "VolumeSnapshot"}
		}, []wantErr{req("spec.dataSourceRef.name")}},
		{"attributes class", func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeAttributesClassName = ptr("Gold") },
			[]wantErr{inv("spec.volumeAttributesClassName")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := claim("1Gi")
			tt.mutate(c)
			checkErrs(t, PersistentVolumeClaimStrategy{}.Validate(context.Background(), c), tt.want...)
		})
	}
}

func TestValidatePersistentVolumeClaimUpdate(t *testing.T) {
	ctx := context.Background()
	bound := func(c *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
		c.Spec.VolumeName = "pv"
		c.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
		return c
	}
	tests := []struct {
		name   string
		old    *corev1.PersistentVolumeClaim
		mutate func(c *corev1.PersistentVolumeClaim)
		want   []wantErr
	}{
		{"bind", claim("1Gi"), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "pv" }, nil},
		{"rebind", bound(claim("1Gi")), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "other" }, []wantErr{forb("spec")}},
		{"resize unbound", claim("1Gi"), func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, []wantErr{forb("spec")}},
		{"resize bound", bound(claim("1Gi")), func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, nil},
		{"shrink to capacity", bound(claim("2Gi")), func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1Gi")
		}, []wantErr{forb("spec.resources.requests.storage")}},
		{"shrink above capacity", bound(claim("3Gi")), func(c *corev1.PersistentVolumeClaim) {
			c.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
		}, nil},
		{"access modes", bound(claim("1Gi")), func(c *corev1.PersistentVolumeClaim) {
			c.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		}, []wantErr{forb("spec")}},
		{"class set once", claim("1Gi"), func(c *corev1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr("fast") }, nil},
		{"attributes class bound", bound(claim("1Gi")), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeAttributesClassName = ptr("gold") }, nil},
		{"volume mode", claim("1Gi"), func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeMode = ptr(corev1.PersistentVolumeBlock) },
			[]wantErr{forb("spec"), inv("volumeMode")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			DefaultPersistentVolumeClaim(tt.old)
			c := tt.old.DeepCopy()
			tt.mutate(c)
			s := PersistentVolumeClaimStrategy{}
			s.PrepareForUpdate(ctx, c, tt.old)
			checkErrs(t, s.ValidateUpdate(ctx, c, tt.old), tt.want...)
		})
	}
	old := claim("1Gi")
	c := old.DeepCopy()
	c.Spec.AccessModes = nil
	errs := ValidatePersistentVolumeClaimUpdate(c, old)
	if len(errs) < 2 || !strings.HasPrefix(errs[len(errs)-1].Detail, "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims") {
		t.Errorf("immutable spec: %v", errs)
	}
}

func TestPersistentVolumeClaimPrepare(t *testing.T) {
	ctx := context.Background()
	c := claim("1.5")
	c.Status.Phase = corev1.ClaimBound
	c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "src"}
	s := PersistentVolumeClaimStrategy{}
	s.PrepareForCreate(ctx, c)
	s.Default(c)
	if c.Status.Phase != corev1.ClaimPending || *c.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("create: phase %q mode %v", c.Status.Phase, c.Spec.VolumeMode)
	}
	if ref := c.Spec.DataSourceRef; ref == nil || ref.Name != "src" || ref.Kind != "PersistentVolumeClaim" {
		t.Errorf("dataSourceRef not filled from dataSource: %+v", ref)
	}
	if w := s.WarningsOnCreate(ctx, c); len(w) != 1 || !strings.Contains(w[0], "fractional byte value") {
		t.Errorf("warnings = %q", w)
	}
	other := claim("1Gi")
	other.Spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: ptr("example.com"), Kind: "Thing", Name: "t"}
	s.PrepareForCreate(ctx, other)
	if other.Spec.DataSource != nil || other.Spec.DataSourceRef != nil {
		t.Errorf("unknown data source kept: %+v", other.Spec)
	}
	st := c.DeepCopy()
	st.Spec.AccessModes = nil
	st.Status.Phase = corev1.ClaimBound
	st.Status.HealthStatus = &corev1.VolumeHealthStatus{}
	PersistentVolumeClaimStatusStrategy{}.PrepareForUpdate(ctx, st, c)
	if len(st.Spec.AccessModes) != 1 || st.Status.HealthStatus != nil || st.Status.Phase != corev1.ClaimBound {
		t.Errorf("status update: %+v", st)
	}
	st.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{"cpu": "Resizing"}
	checkErrs(t, PersistentVolumeClaimStatusStrategy{}.ValidateUpdate(ctx, st, c),
		notSupportedAt("status.allocatedResourceStatuses"), notSupportedAt("status.allocatedResourceStatuses"))
}
