// Package rbac holds the strategies of rbac.authorization.k8s.io/v1 (roles,
// cluster roles and their bindings, validated as kube validates them) and
// the REST storage that keeps users from granting what they do not hold.
package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// RoleStrategy is the strategy of the roles resource.
type RoleStrategy struct{}

var (
	_ registry.Strategy        = RoleStrategy{}
	_ registry.CreateOnUpdater = RoleStrategy{}
	_ registry.NameValidator   = RoleStrategy{}
)

// NamespaceScoped is true.
func (RoleStrategy) NamespaceScoped() bool { return true }

// AllowCreateOnUpdate is true, as in kube: a PUT may create a role.
func (RoleStrategy) AllowCreateOnUpdate() bool { return true }

// ValidateName accepts any path segment.
func (RoleStrategy) ValidateName(name string, prefix bool) []string {
	return ValidateName(name, prefix)
}

// PrepareForCreate changes nothing: a role has no status.
func (RoleStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate changes nothing.
func (RoleStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate checks the rules; non-resource URLs are not allowed in a role.
func (RoleStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateRules(obj.(*rbacv1.Role).Rules, true)
}

// ValidateUpdate is Validate: every field may change.
func (s RoleStrategy) ValidateUpdate(ctx context.Context, obj, _ runtime.Object) field.ErrorList {
	return s.Validate(ctx, obj)
}

// ClusterRoleStrategy is the strategy of the clusterroles resource.
type ClusterRoleStrategy struct{}

var (
	_ registry.Strategy        = ClusterRoleStrategy{}
	_ registry.CreateOnUpdater = ClusterRoleStrategy{}
	_ registry.NameValidator   = ClusterRoleStrategy{}
)

// NamespaceScoped is false.
func (ClusterRoleStrategy) NamespaceScoped() bool { return false }

// AllowCreateOnUpdate is true, as in kube.
func (ClusterRoleStrategy) AllowCreateOnUpdate() bool { return true }

// ValidateName accepts any path segment.
func (ClusterRoleStrategy) ValidateName(name string, prefix bool) []string {
	return ValidateName(name, prefix)
}

// PrepareForCreate changes nothing.
func (ClusterRoleStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate changes nothing.
func (ClusterRoleStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate checks the rules and the aggregationRule.
func (ClusterRoleStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	role := obj.(*rbacv1.ClusterRole)
	errs := validateRules(role.Rules, false)
	return append(errs, validateAggregationRule(role.AggregationRule, false)...)
}

// ValidateUpdate is Validate, except that label values in selectors the old
// role already had invalid are tolerated.
func (ClusterRoleStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	role, oldRole := obj.(*rbacv1.ClusterRole), old.(*rbacv1.ClusterRole)
	errs := validateRules(role.Rules, false)
	return append(errs, validateAggregationRule(role.AggregationRule, hasInvalidLabelValues(oldRole.AggregationRule))...)
}
