package storage

import (
	"context"
	"slices"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/registry"
)

// tokenInSecretsRecommended is kube's warning for token requests without
// serviceAccountTokenInSecrets.
const tokenInSecretsRecommended = "spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, " +
	"set to true to prevent possible logging of tokens in volume attributes"

var (
	fsGroupPolicies = []string{string(storagev1.FileFSGroupPolicy), string(storagev1.NoneFSGroupPolicy), string(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)}
	lifecycleModes  = []string{string(storagev1.VolumeLifecyclePersistent), string(storagev1.VolumeLifecycleEphemeral)}
)

// CSIDriverStrategy is the strategy of the cluster-scoped csidrivers
// resource. The feature gates its fields depend on are all on in 1.37.
type CSIDriverStrategy struct{}

var (
	_ registry.Strategy             = CSIDriverStrategy{}
	_ registry.Defaulter            = CSIDriverStrategy{}
	_ registry.UnconditionalUpdater = CSIDriverStrategy{}
	_ registry.WarningsOnCreate     = CSIDriverStrategy{}
	_ registry.WarningsOnUpdate     = CSIDriverStrategy{}
)

// NamespaceScoped is false.
func (CSIDriverStrategy) NamespaceScoped() bool { return false }

// AllowUnconditionalUpdate is false, as in kube.
func (CSIDriverStrategy) AllowUnconditionalUpdate() bool { return false }

// Default fills every unset field of the spec with kube's value: attach
// required, persistent volumes, ReadWriteOnceWithFSType, the rest false.
func (CSIDriverStrategy) Default(obj runtime.Object) {
	s := &obj.(*storagev1.CSIDriver).Spec
	for _, b := range []**bool{&s.PodInfoOnMount, &s.StorageCapacity, &s.RequiresRepublish, &s.SELinuxMount, &s.PreventPodSchedulingIfMissing} {
		if *b == nil {
			*b = ptr.To(false)
		}
	}
	if s.AttachRequired == nil {
		s.AttachRequired = ptr.To(true)
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = append(s.VolumeLifecycleModes, storagev1.VolumeLifecyclePersistent)
	}
}

// PrepareForCreate does nothing: kube leaves a driver's generation alone on
// create.
func (CSIDriverStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate bumps the generation when the spec changed.
func (CSIDriverStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	d, oldD := obj.(*storagev1.CSIDriver), old.(*storagev1.CSIDriver)
	registry.CountSpecChange(d, oldD, &d.Spec, &oldD.Spec)
}

// Validate validates a new driver.
func (CSIDriverStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateCSIDriverSpec(&obj.(*storagev1.CSIDriver).Spec, field.NewPath("spec"))
}

// ValidateUpdate validates an update: attachRequired and the lifecycle
// modes are immutable. kube names the first "spec.attachedRequired".
func (CSIDriverStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := &obj.(*storagev1.CSIDriver).Spec, &old.(*storagev1.CSIDriver).Spec
	errs := ValidateCSIDriverSpec(s, field.NewPath("spec"))
	errs = append(errs, apivalidation.ValidateImmutableField(s.AttachRequired, oldS.AttachRequired, field.NewPath("spec", "attachedRequired"))...)
	return append(errs, apivalidation.ValidateImmutableField(s.VolumeLifecycleModes, oldS.VolumeLifecycleModes, field.NewPath("spec", "volumeLifecycleModes"))...)
}

// WarningsOnCreate recommends serviceAccountTokenInSecrets with token
// requests.
func (CSIDriverStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	s := &obj.(*storagev1.CSIDriver).Spec
	if len(s.TokenRequests) > 0 && s.ServiceAccountTokenInSecrets == nil {
		return []string{tokenInSecretsRecommended}
	}
	return nil
}

// WarningsOnUpdate recommends serviceAccountTokenInSecrets when the token
// requests change.
func (CSIDriverStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	s, oldS := &obj.(*storagev1.CSIDriver).Spec, &old.(*storagev1.CSIDriver).Spec
	if !apiequality.Semantic.DeepEqual(s.TokenRequests, oldS.TokenRequests) && len(s.TokenRequests) > 0 && s.ServiceAccountTokenInSecrets == nil {
		return []string{tokenInSecretsRecommended}
	}
	return nil
}

// ValidateCSIDriverSpec validates a driver's spec: the fields defaulting
// sets are required, and the enumerations, token requests and update period
// are checked.
func ValidateCSIDriverSpec(s *storagev1.CSIDriverSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	required := func(b *bool, name string) {
		if b == nil {
			errs = append(errs, field.Required(fldPath.Child(name), ""))
		}
	}
	required(s.AttachRequired, "attachedRequired")
	required(s.PodInfoOnMount, "podInfoOnMount")
	required(s.StorageCapacity, "storageCapacity")
	if p := s.FSGroupPolicy; p != nil && !slices.Contains(fsGroupPolicies, string(*p)) {
		errs = append(errs, field.NotSupported(fldPath.Child("fsGroupPolicy"), p, fsGroupPolicies))
	}
	errs = append(errs, validateTokenRequests(s.TokenRequests, fldPath.Child("tokenRequests"))...)
	for _, m := range s.VolumeLifecycleModes {
		if !slices.Contains(lifecycleModes, string(m)) {
			errs = append(errs, field.NotSupported(fldPath.Child("volumeLifecycleModes"), m, lifecycleModes))
		}
	}
	required(s.SELinuxMount, "seLinuxMount")
	if p := s.NodeAllocatableUpdatePeriodSeconds; p != nil && *p < 10 {
		errs = append(errs, field.Invalid(fldPath.Child("nodeAllocatableUpdatePeriodSeconds"), *p, "must be greater than or equal to 10 seconds"))
	}
	if s.ServiceAccountTokenInSecrets != nil && len(s.TokenRequests) == 0 {
		errs = append(errs, field.Invalid(fldPath.Child("serviceAccountTokenInSecrets"), s.ServiceAccountTokenInSecrets,
			"serviceAccountTokenInSecrets is set but no tokenRequests are specified"))
	}
	required(s.PreventPodSchedulingIfMissing, "preventPodSchedulingIfMissing")
	return errs
}

// validateTokenRequests: distinct audiences, and expirations between ten
// minutes and 2^32 seconds.
func validateTokenRequests(reqs []storagev1.TokenRequest, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range reqs {
		p := fldPath.Index(i)
		if seen[r.Audience] {
			errs = append(errs, field.Duplicate(p.Child("audience"), r.Audience))
			continue
		}
		seen[r.Audience] = true
		if r.ExpirationSeconds == nil {
			continue
		}
		if *r.ExpirationSeconds < 600 {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), *r.ExpirationSeconds, "may not specify a duration less than 10 minutes"))
		}
		if *r.ExpirationSeconds > 1<<32 {
			errs = append(errs, field.Invalid(p.Child("expirationSeconds"), *r.ExpirationSeconds, "may not specify a duration larger than 2^32 seconds"))
		}
	}
	return errs
}
