package coordination

import (
	"context"

	"github.com/blang/semver/v4"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// LeaseCandidateStrategy is the strategy of coordination.k8s.io/v1beta1
// leasecandidates, which kube 1.37 serves only at that beta version: the
// candidates of coordinated leader election, one per component instance,
// each naming the lease it runs for and its versions.
type LeaseCandidateStrategy struct{}

var (
	_ registry.Strategy             = LeaseCandidateStrategy{}
	_ registry.CreateOnUpdater      = LeaseCandidateStrategy{}
	_ registry.UnconditionalUpdater = LeaseCandidateStrategy{}
	_ registry.NameValidator        = LeaseCandidateStrategy{}
	_ registry.FieldSelectable      = LeaseCandidateStrategy{}
)

// NamespaceScoped is true.
func (LeaseCandidateStrategy) NamespaceScoped() bool { return true }

// AllowCreateOnUpdate is true: candidates renew with PUT, as leases.
func (LeaseCandidateStrategy) AllowCreateOnUpdate() bool { return true }

// AllowUnconditionalUpdate is false: an update names its resourceVersion.
func (LeaseCandidateStrategy) AllowUnconditionalUpdate() bool { return false }

// ValidateName accepts what a config map key may be, as kube.
func (LeaseCandidateStrategy) ValidateName(name string, _ bool) []string {
	return validation.IsConfigMapKey(name)
}

// PrepareForCreate changes nothing: a candidate has no status.
func (LeaseCandidateStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate changes nothing.
func (LeaseCandidateStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate checks the spec.
func (LeaseCandidateStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateLeaseCandidateSpec(&obj.(*coordinationv1beta1.LeaseCandidate).Spec, field.NewPath("spec"))
}

// ValidateUpdate checks the spec and keeps its lease name.
func (LeaseCandidateStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	spec, oldSpec := &obj.(*coordinationv1beta1.LeaseCandidate).Spec, &old.(*coordinationv1beta1.LeaseCandidate).Spec
	errs := validateLeaseCandidateSpec(spec, field.NewPath("spec"))
	return append(errs, apivalidation.ValidateImmutableField(spec.LeaseName, oldSpec.LeaseName, field.NewPath("spec", "leaseName"))...)
}

// Fields adds spec.leaseName to the field selectors.
func (LeaseCandidateStrategy) Fields(obj runtime.Object) fields.Set {
	return fields.Set{"spec.leaseName": obj.(*coordinationv1beta1.LeaseCandidate).Spec.LeaseName}
}

// validateLeaseCandidateSpec is kube's: a lease name, semantic versions
// with the binary at least the emulation version, and a strategy, which
// OldestEmulationVersion needs an emulation version for. As in kube, the
// strategy's own errors name spec.strategy.strategy.
func validateLeaseCandidateSpec(spec *coordinationv1beta1.LeaseCandidateSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.LeaseName == "" {
		errs = append(errs, field.Required(path.Child("leaseName"), ""))
	}
	var ev, bv semver.Version
	if spec.EmulationVersion != "" {
		var err error
		if ev, err = semver.Parse(spec.EmulationVersion); err != nil {
			errs = append(errs, field.Invalid(path.Child("emulationVersion"), spec.EmulationVersion, "must be a valid semantic version"))
		}
	}
	if spec.BinaryVersion == "" {
		errs = append(errs, field.Required(path.Child("binaryVersion"), ""))
	} else {
		var err error
		if bv, err = semver.Parse(spec.BinaryVersion); err != nil {
			errs = append(errs, field.Invalid(path.Child("binaryVersion"), spec.BinaryVersion, "must be a valid semantic version"))
		}
	}
	if spec.BinaryVersion != "" && spec.EmulationVersion != "" && bv.LT(ev) {
		errs = append(errs, field.Invalid(path.Child("binaryVersion"), spec.BinaryVersion, "must be greater than or equal to `emulationVersion`"))
	}
	if spec.Strategy == "" {
		return append(errs, field.Required(path.Child("strategy"), ""))
	}
	if spec.Strategy == coordinationv1.OldestEmulationVersion && ev.EQ(semver.Version{}) {
		errs = append(errs, field.Required(path.Child("emulationVersion"), "must be specified when `strategy` is 'OldestEmulationVersion'"))
	}
	return append(errs, ValidateCoordinatedLeaseStrategy(spec.Strategy, path.Child("strategy"))...)
}
