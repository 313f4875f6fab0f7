package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// StaticSource is a Source over fixed lists, for tests and for tools that
// evaluate a policy offline.
type StaticSource struct {
	Roles               []*rbacv1.Role
	RoleBindings        []*rbacv1.RoleBinding
	ClusterRoles        []*rbacv1.ClusterRole
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
}

var _ Source = (*StaticSource)(nil)

// GetRole finds a Role, or answers NotFound as a lister would.
func (s *StaticSource) GetRole(_ context.Context, namespace, name string) (*rbacv1.Role, error) {
	for _, r := range s.Roles {
		if r.Namespace == namespace && r.Name == name {
			return r, nil
		}
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("role"), name)
}

// ListRoleBindings returns the RoleBindings of namespace.
func (s *StaticSource) ListRoleBindings(_ context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	var out []*rbacv1.RoleBinding
	for _, b := range s.RoleBindings {
		if b.Namespace == namespace {
			out = append(out, b)
		}
	}
	return out, nil
}

// GetClusterRole finds a ClusterRole, or answers NotFound as a lister would.
func (s *StaticSource) GetClusterRole(_ context.Context, name string) (*rbacv1.ClusterRole, error) {
	for _, r := range s.ClusterRoles {
		if r.Name == name {
			return r, nil
		}
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("clusterrole"), name)
}

// ListClusterRoleBindings returns every ClusterRoleBinding.
func (s *StaticSource) ListClusterRoleBindings(context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	return s.ClusterRoleBindings, nil
}
