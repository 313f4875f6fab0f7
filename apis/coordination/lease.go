// Package coordination holds the strategy of coordination.k8s.io/v1 leases.
package coordination

import (
	"context"
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// LeaseStrategy is the strategy of the leases resource.
type LeaseStrategy struct {
	// CoordinatedLeaderElection enables spec.strategy and
	// spec.preferredHolder, as kube's feature gate of that name (off by
	// default in 1.37). When false they are dropped from new leases and kept
	// on updates only where the old lease had them.
	CoordinatedLeaderElection bool
}

var (
	_ registry.Strategy        = LeaseStrategy{}
	_ registry.CreateOnUpdater = LeaseStrategy{}
)

// NamespaceScoped is true.
func (LeaseStrategy) NamespaceScoped() bool { return true }

// AllowCreateOnUpdate is true: leader election PUTs its lease to take it,
// whether or not it exists.
func (LeaseStrategy) AllowCreateOnUpdate() bool { return true }

// AllowUnconditionalUpdate is false, as in kube: an update of a lease must
// carry a resourceVersion, or two candidates could both win an election.
func (LeaseStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate drops the coordinated leader election fields when disabled.
func (s LeaseStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if s.CoordinatedLeaderElection {
		return
	}
	lease := obj.(*coordinationv1.Lease)
	lease.Spec.Strategy = nil
	lease.Spec.PreferredHolder = nil
}

// PrepareForUpdate drops the coordinated leader election fields when disabled,
// unless the old lease already used them.
func (s LeaseStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	if s.CoordinatedLeaderElection {
		return
	}
	lease, oldLease := obj.(*coordinationv1.Lease), old.(*coordinationv1.Lease)
	if oldLease.Spec.Strategy == nil {
		lease.Spec.Strategy = nil
	}
	if oldLease.Spec.PreferredHolder == nil {
		lease.Spec.PreferredHolder = nil
	}
}

// Validate validates a new lease.
func (LeaseStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateLeaseSpec(&obj.(*coordinationv1.Lease).Spec, field.NewPath("spec"))
}

// ValidateUpdate validates an updated lease; every field may change.
func (LeaseStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateLeaseSpec(&obj.(*coordinationv1.Lease).Spec, field.NewPath("spec"))
}

// validLeaseStrategies are the strategies without a domain prefix.
var validLeaseStrategies = []coordinationv1.CoordinatedLeaseStrategy{coordinationv1.OldestEmulationVersion}

// ValidateLeaseSpec validates the spec of a lease.
func ValidateLeaseSpec(spec *coordinationv1.LeaseSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(fldPath.Child("leaseDurationSeconds"), d, "must be greater than 0"))
	}
	if t := spec.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(fldPath.Child("leaseTransitions"), t, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		errs = append(errs, ValidateCoordinatedLeaseStrategy(*spec.Strategy, fldPath.Child("strategy"))...)
	}
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		errs = append(errs, field.Forbidden(fldPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

// ValidateCoordinatedLeaseStrategy accepts a strategy kube defines or a
// domain-prefixed qualified name. As in kube, the errors name
// fldPath.strategy, so a lease reports spec.strategy.strategy.
func ValidateCoordinatedLeaseStrategy(strategy coordinationv1.CoordinatedLeaseStrategy, fldPath *field.Path) field.ErrorList {
	errPath := fldPath.Child("strategy")
	if !strings.Contains(string(strategy), "/") {
		if !slices.Contains(validLeaseStrategies, strategy) {
			return field.ErrorList{field.NotSupported(errPath, strategy, validLeaseStrategies)}
		}
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(strategy)) {
		errs = append(errs, field.Invalid(errPath, strategy, msg))
	}
	return errs
}
