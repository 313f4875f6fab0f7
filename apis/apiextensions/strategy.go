// Package apiextensions holds the strategies of apiextensions.k8s.io/v1
// customresourcedefinitions and their status subresource, kube's
// validation of CRDs, and the helpers other code reads CRDs with (storage
// and served versions, conditions).
package apiextensions

import (
	"context"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// CRDStrategy is the strategy of the customresourcedefinitions resource.
type CRDStrategy struct{}

var (
	_ registry.Strategy             = CRDStrategy{}
	_ registry.Defaulter            = CRDStrategy{}
	_ registry.WarningsOnCreate     = CRDStrategy{}
	_ registry.WarningsOnUpdate     = CRDStrategy{}
	_ registry.UnconditionalUpdater = CRDStrategy{}
)

// NamespaceScoped is false: CRDs are cluster-scoped.
func (CRDStrategy) NamespaceScoped() bool { return false }

// AllowUnconditionalUpdate is false, as in kube: an update must carry the
// resourceVersion it read.
func (CRDStrategy) AllowUnconditionalUpdate() bool { return false }

// Default applies kube's v1 defaults: names.singular and names.listKind
// from the kind, conversion strategy None, the storage version in
// status.storedVersions, and port 443 of a conversion webhook's Service.
func (CRDStrategy) Default(obj runtime.Object) {
	apiextv1.SetObjectDefaults_CustomResourceDefinition(obj.(*apiextv1.CustomResourceDefinition))
}

// PrepareForCreate clears the status but for status.storedVersions, which
// starts with the storage version, and starts the generation at 1.
func (CRDStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	crd := obj.(*apiextv1.CustomResourceDefinition)
	crd.Status = apiextv1.CustomResourceDefinitionStatus{}
	crd.Generation = 1
	addStorageVersion(crd)
}

// PrepareForUpdate keeps the status of old, adds a new storage version to
// status.storedVersions, and bumps the generation when the spec changed.
func (CRDStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	crd, oldCRD := obj.(*apiextv1.CustomResourceDefinition), old.(*apiextv1.CustomResourceDefinition)
	crd.Status = *oldCRD.Status.DeepCopy()
	registry.CountSpecChange(crd, oldCRD, &crd.Spec, &oldCRD.Spec)
	addStorageVersion(crd)
}

// addStorageVersion appends the first storage version to
// status.storedVersions unless it is there.
func addStorageVersion(crd *apiextv1.CustomResourceDefinition) {
	v, err := StorageVersion(crd)
	if err == nil && !IsStoredVersion(crd, v) {
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v)
	}
}

// Validate validates a new CRD.
func (CRDStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return ValidateCustomResourceDefinition(ctx, obj.(*apiextv1.CustomResourceDefinition))
}

// ValidateUpdate validates an update of the main resource.
func (CRDStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateCustomResourceDefinitionUpdate(ctx, obj.(*apiextv1.CustomResourceDefinition), old.(*apiextv1.CustomResourceDefinition))
}

// WarningsOnCreate warns of schema formats kube ignores and of set lists
// whose items are objects or arrays.
func (CRDStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return createWarnings(obj.(*apiextv1.CustomResourceDefinition))
}

// WarningsOnUpdate gives the warnings of WarningsOnCreate that old did not
// already deserve.
func (CRDStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	return updateWarnings(obj.(*apiextv1.CustomResourceDefinition), old.(*apiextv1.CustomResourceDefinition))
}

// CRDStatusStrategy is the strategy of customresourcedefinitions/status:
// an update changes the status only.
type CRDStatusStrategy struct{ CRDStrategy }

var _ registry.Strategy = CRDStatusStrategy{}

// PrepareForUpdate keeps the spec of old, shared with it as kube does
// (neither is changed after: copying the schemas would be most of the
// cost of a status write). As in kube, metadata may change (kube means to
// reset it but resets the new object onto itself).
func (CRDStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	crd, oldCRD := obj.(*apiextv1.CustomResourceDefinition), old.(*apiextv1.CustomResourceDefinition)
	crd.Spec = oldCRD.Spec
}

// ValidateUpdate validates the new status: its accepted names.
func (CRDStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateUpdateCustomResourceDefinitionStatus(obj.(*apiextv1.CustomResourceDefinition), old.(*apiextv1.CustomResourceDefinition))
}

// WarningsOnUpdate gives no warnings for a status update.
func (CRDStatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
