package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// RoleBindingStrategy is the strategy of the rolebindings resource.
type RoleBindingStrategy struct{}

var (
	_ registry.Strategy        = RoleBindingStrategy{}
	_ registry.CreateOnUpdater = RoleBindingStrategy{}
	_ registry.NameValidator   = RoleBindingStrategy{}
	_ registry.Defaulter       = RoleBindingStrategy{}
)

// NamespaceScoped is true.
func (RoleBindingStrategy) NamespaceScoped() bool { return true }

// AllowCreateOnUpdate is true, as in kube.
func (RoleBindingStrategy) AllowCreateOnUpdate() bool { return true }

// ValidateName accepts any path segment.
func (RoleBindingStrategy) ValidateName(name string, prefix bool) []string {
	return ValidateName(name, prefix)
}

// Default fills the API groups of the roleRef and of the subjects.
func (RoleBindingStrategy) Default(obj runtime.Object) {
	b := obj.(*rbacv1.RoleBinding)
	defaultRoleRef(&b.RoleRef)
	defaultSubjects(b.Subjects)
}

// PrepareForCreate changes nothing.
func (RoleBindingStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate changes nothing.
func (RoleBindingStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate checks the roleRef (a Role or ClusterRole) and the subjects.
func (RoleBindingStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	b := obj.(*rbacv1.RoleBinding)
	errs := validateRoleRef(b.RoleRef, "Role", "ClusterRole")
	return append(errs, validateSubjects(b.Subjects, true)...)
}

// ValidateUpdate is Validate, and the roleRef must not change.
func (s RoleBindingStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.Validate(ctx, obj)
	return append(errs, validateRoleRefUnchanged(obj.(*rbacv1.RoleBinding).RoleRef, old.(*rbacv1.RoleBinding).RoleRef)...)
}

// ClusterRoleBindingStrategy is the strategy of the clusterrolebindings
// resource.
type ClusterRoleBindingStrategy struct{}

var (
	_ registry.Strategy        = ClusterRoleBindingStrategy{}
	_ registry.CreateOnUpdater = ClusterRoleBindingStrategy{}
	_ registry.NameValidator   = ClusterRoleBindingStrategy{}
	_ registry.Defaulter       = ClusterRoleBindingStrategy{}
)

// NamespaceScoped is false.
func (ClusterRoleBindingStrategy) NamespaceScoped() bool { return false }

// AllowCreateOnUpdate is true, as in kube.
func (ClusterRoleBindingStrategy) AllowCreateOnUpdate() bool { return true }

// ValidateName accepts any path segment.
func (ClusterRoleBindingStrategy) ValidateName(name string, prefix bool) []string {
	return ValidateName(name, prefix)
}

// Default fills the API groups of the roleRef and of the subjects.
func (ClusterRoleBindingStrategy) Default(obj runtime.Object) {
	b := obj.(*rbacv1.ClusterRoleBinding)
	defaultRoleRef(&b.RoleRef)
	defaultSubjects(b.Subjects)
}

// PrepareForCreate changes nothing.
func (ClusterRoleBindingStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate changes nothing.
func (ClusterRoleBindingStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate checks the roleRef (a ClusterRole) and the subjects, whose
// service accounts must name their namespace.
func (ClusterRoleBindingStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	b := obj.(*rbacv1.ClusterRoleBinding)
	errs := validateRoleRef(b.RoleRef, "ClusterRole")
	return append(errs, validateSubjects(b.Subjects, false)...)
}

// ValidateUpdate is Validate, and the roleRef must not change.
func (s ClusterRoleBindingStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	errs := s.Validate(ctx, obj)
	return append(errs, validateRoleRefUnchanged(obj.(*rbacv1.ClusterRoleBinding).RoleRef, old.(*rbacv1.ClusterRoleBinding).RoleRef)...)
}
