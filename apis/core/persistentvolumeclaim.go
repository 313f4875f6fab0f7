package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// PersistentVolumeClaimStrategy is the strategy of the
// persistentvolumeclaims resource.
type PersistentVolumeClaimStrategy struct{}

var (
	_ registry.Strategy         = PersistentVolumeClaimStrategy{}
	_ registry.Defaulter        = PersistentVolumeClaimStrategy{}
	_ registry.FieldSelectable  = PersistentVolumeClaimStrategy{}
	_ registry.WarningsOnCreate = PersistentVolumeClaimStrategy{}
	_ registry.WarningsOnUpdate = PersistentVolumeClaimStrategy{}
)

// NamespaceScoped is true.
func (PersistentVolumeClaimStrategy) NamespaceScoped() bool { return true }

// Default applies kube's claim defaults.
func (PersistentVolumeClaimStrategy) Default(obj runtime.Object) {
	DefaultPersistentVolumeClaim(obj.(*corev1.PersistentVolumeClaim))
}

// DefaultPersistentVolumeClaim applies kube's defaults: a Pending phase,
// the Filesystem mode, quantities rounded to milli precision.
func DefaultPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptr(corev1.PersistentVolumeFilesystem)
	}
	roundResourceList(pvc.Spec.Resources.Limits)
	roundResourceList(pvc.Spec.Resources.Requests)
	roundResourceList(pvc.Status.Capacity)
	roundResourceList(pvc.Status.AllocatedResources)
}

// PrepareForCreate starts the claim Pending with a fresh status and
// reconciles its two data source fields.
func (PersistentVolumeClaimStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pvc := obj.(*corev1.PersistentVolumeClaim)
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	dropUnknownDataSource(&pvc.Spec, nil)
	normalizeDataSources(&pvc.Spec)
}

// PrepareForUpdate keeps the status, which changes through
// persistentvolumeclaims/status, and reconciles the data sources of both
// claims so that they compare equal when unchanged.
func (PersistentVolumeClaimStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pvc, oldPVC := obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim)
	pvc.Status = oldPVC.Status
	dropUnknownDataSource(&pvc.Spec, &oldPVC.Spec)
	normalizeDataSources(&pvc.Spec)
	normalizeDataSources(&oldPVC.Spec)
}

// dropUnknownDataSource drops a new dataSource that is neither a claim nor
// a volume snapshot when dataSourceRef is unset: older servers did.
func dropUnknownDataSource(spec, old *corev1.PersistentVolumeClaimSpec) {
	if old != nil && (old.DataSource != nil || old.DataSourceRef != nil) {
		return
	}
	if spec.DataSourceRef != nil || spec.DataSource == nil {
		return
	}
	group := ""
	if spec.DataSource.APIGroup != nil {
		group = *spec.DataSource.APIGroup
	}
	claim := spec.DataSource.Kind == "PersistentVolumeClaim" && group == ""
	snapshot := spec.DataSource.Kind == "VolumeSnapshot" && group == "snapshot.storage.k8s.io"
	if !claim && !snapshot {
		spec.DataSource = nil
	}
}

// normalizeDataSources fills whichever of dataSource and dataSourceRef is
// missing from the other; a cross-namespace reference has no dataSource.
func normalizeDataSources(spec *corev1.PersistentVolumeClaimSpec) {
	ds, ref := spec.DataSource, spec.DataSourceRef
	switch {
	case ds != nil && ref == nil:
		spec.DataSourceRef = &corev1.TypedObjectReference{Kind: ds.Kind, Name: ds.Name}
		if ds.APIGroup != nil {
			spec.DataSourceRef.APIGroup = ptr(*ds.APIGroup)
		}
	case ref != nil && ds == nil && (ref.Namespace == nil || *ref.Namespace == ""):
		spec.DataSource = &corev1.TypedLocalObjectReference{Kind: ref.Kind, Name: ref.Name}
		if ref.APIGroup != nil {
			spec.DataSource.APIGroup = ptr(*ref.APIGroup)
		}
	}
}

// Validate validates a new claim.
func (PersistentVolumeClaimStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidatePersistentVolumeClaim(obj.(*corev1.PersistentVolumeClaim))
}

// ValidateUpdate validates an update: the spec is immutable but for what
// binding and resizing change.
func (PersistentVolumeClaimStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidatePersistentVolumeClaimUpdate(obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim))
}

// WarningsOnCreate warns of the deprecated storage class annotation.
func (PersistentVolumeClaimStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return claimWarnings(obj.(*corev1.PersistentVolumeClaim))
}

// WarningsOnUpdate is WarningsOnCreate.
func (PersistentVolumeClaimStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return claimWarnings(obj.(*corev1.PersistentVolumeClaim))
}

func claimWarnings(pvc *corev1.PersistentVolumeClaim) []string {
	var out []string
	if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		out = append(out, fmt.Sprintf("%s: %s", field.NewPath("metadata", "annotations").Key(corev1.BetaStorageClassAnnotation),
			`deprecated since v1.8; use "storageClassName" attribute instead`))
	}
	r := pvc.Spec.Resources
	for _, l := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		if q := l.list[corev1.ResourceStorage]; q.MilliValue()%1000 != 0 {
			out = append(out, fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer",
				field.NewPath("spec", "resources", l.name).Key(string(corev1.ResourceStorage)), q.String()))
		}
	}
	return out
}

// Fields returns name, kube's legacy alias of metadata.name for claims.
func (PersistentVolumeClaimStrategy) Fields(obj runtime.Object) fields.Set {
	return fields.Set{"name": obj.(*corev1.PersistentVolumeClaim).Name}
}

// PersistentVolumeClaimStatusStrategy is the strategy of
// persistentvolumeclaims/status: an update changes the status only.
type PersistentVolumeClaimStatusStrategy struct{ PersistentVolumeClaimStrategy }

// PrepareForUpdate keeps the spec of old, and the health status of the
// disabled CSIVolumeHealth feature unless the claim had one.
func (PersistentVolumeClaimStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pvc, oldPVC := obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim)
	pvc.Spec = oldPVC.Spec
	if oldPVC.Status.HealthStatus == nil {
		pvc.Status.HealthStatus = nil
	}
}

// ValidateUpdate validates a status update.
func (PersistentVolumeClaimStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidatePersistentVolumeClaimStatusUpdate(obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim))
}

// WarningsOnUpdate has nothing to say of a status.
func (PersistentVolumeClaimStatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
