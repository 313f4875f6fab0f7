package core

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// standardQuotaResources are the unprefixed resources quota tracks, besides
// hugepages.
var standardQuotaResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
	corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage,
	corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
	corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices,
	corev1.ResourceReplicationControllers, corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims,
	corev1.ResourceConfigMaps, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers)

var (
	quotaScopes = sets.New(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass,
		corev1.ResourceQuotaScopeVolumeAttributesClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)
	podComputeQuota = sets.New(corev1.ResourcePods, corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceLimitsCPU,
		corev1.ResourceLimitsMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
	claimQuota = sets.New(corev1.ResourcePersistentVolumeClaims, corev1.ResourceRequestsStorage)
	// conflictingScopes are the pairs of scopes no quota may hold both of.
	conflictingScopes = [][2]corev1.ResourceQuotaScope{
		{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
		{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
	}
)

// isStandardQuotaResource: a resource quota tracks without a prefix.
func isStandardQuotaResource(name corev1.ResourceName) bool {
	return standardQuotaResources.Has(name) || isHugePages(name) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

// scopeAppliesTo reports whether a quota of resource may have scope.
func scopeAppliesTo(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podComputeQuota.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return name == corev1.ResourcePods
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return claimQuota.Has(name)
	}
	return true
}

// validateQuotaResources checks the names and quantities of a quota list.
func validateQuotaResources(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range list {
		path := fldPath.Key(string(name))
		errs = append(errs, validateResourceName(name, path)...)
		if !strings.Contains(string(name), "/") && !isStandardQuotaResource(name) {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for quota"))
		}
		errs = append(errs, validateResourceQuantityValue(name, q, path)...)
	}
	return errs
}

// ValidateResourceQuotaSpec checks the hard limits and the scopes.
func ValidateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	errs := validateQuotaResources(spec.Hard, fldPath.Child("hard"))
	errs = append(errs, validateQuotaScopes(spec, fldPath.Child("scopes"))...)
	if spec.ScopeSelector != nil {
		errs = append(errs, validateScopeSelector(spec, fldPath.Child("scopeSelector", "matchExpressions"))...)
	}
	return errs
}

func validateQuotaStatus(s *corev1.ResourceQuotaStatus) field.ErrorList {
	errs := validateQuotaResources(s.Hard, field.NewPath("status", "hard"))
	return append(errs, validateQuotaResources(s.Used, field.NewPath("status", "used"))...)
}

// ValidateResourceQuotaUpdate checks the new spec; its scopes may not
// change.
func ValidateResourceQuotaUpdate(q, old *corev1.ResourceQuota) field.ErrorList {
	errs := ValidateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))
	if !sets.New(q.Spec.Scopes...).Equal(sets.New(old.Spec.Scopes...)) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "scopes"), q.Spec.Scopes, apivalidation.FieldImmutableErrorMsg))
	}
	return errs
}

// validateQuotaScopes requires known scopes, that apply to every standard
// resource of the quota, and no conflicting pair. Errors carry the whole
// list, as in kube.
func validateQuotaScopes(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, scope := range spec.Scopes {
		if !quotaScopes.Has(scope) {
			errs = append(errs, field.Invalid(fldPath, spec.Scopes, "unsupported scope"))
		}
		for _, name := range sortedQuotaNames(spec.Hard) {
			if isStandardQuotaResource(name) && !scopeAppliesTo(scope, name) {
				errs = append(errs, field.Invalid(fldPath, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
	}
	return append(errs, conflictingScopeErrs(sets.New(spec.Scopes...), spec.Scopes, fldPath)...)
}

func conflictingScopeErrs(set sets.Set[corev1.ResourceQuotaScope], value any, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, pair := range conflictingScopes {
		if set.HasAll(pair[0], pair[1]) {
			errs = append(errs, field.Invalid(fldPath, value, "conflicting scopes"))
		}
	}
	return errs
}

func sortedQuotaNames(list corev1.ResourceList) []corev1.ResourceName {
	names := sets.New[corev1.ResourceName]()
	for name := range list {
		names.Insert(name)
	}
	return sets.List(names)
}

// validateScopeSelector checks the match expressions of a scope selector:
// known scopes that apply to the quota's resources, operators and values.
func validateScopeSelector(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, r := range spec.ScopeSelector.MatchExpressions {
		if !quotaScopes.Has(r.ScopeName) {
			errs = append(errs, field.Invalid(fldPath.Child("scopeName"), r.ScopeName, "unsupported scope"))
		}
		for _, name := range sortedQuotaNames(spec.Hard) {
			if isStandardQuotaResource(name) && !scopeAppliesTo(r.ScopeName, name) {
				errs = append(errs, field.Invalid(fldPath, spec.ScopeSelector, "unsupported scope applied to resource"))
			}
		}
		errs = append(errs, validateScopeOperator(r, fldPath)...)
		seen.Insert(r.ScopeName)
	}
	return append(errs, conflictingScopeErrs(seen, spec.Scopes, fldPath)...)
}

func validateScopeOperator(r corev1.ScopedResourceSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.ScopeName {
	case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
		corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		if r.Operator != corev1.ScopeSelectorOpExists {
			errs = append(errs, field.Invalid(fldPath.Child("operator"), r.Operator, "must be 'Exists' when scope is any of "+
				"ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "+
				"ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
		}
	}
	switch r.Operator {
	case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
		}
	case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
		if len(r.Values) != 0 {
			errs = append(errs, field.Invalid(fldPath.Child("values"), r.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
		}
	default:
		errs = append(errs, field.Invalid(fldPath.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	return errs
}
