package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authzrbac "github.com/capstan-io/capstan/authz/rbac"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

// Stores are the registry stores of the four RBAC resources.
type Stores struct {
	Roles, RoleBindings, ClusterRoles, ClusterRoleBindings *registry.Store
}

// Source reads RBAC objects straight from the stores: always current, one
// storage read per call. The escalation checks use it, as kube's do, and the
// authorizer until its informers have synced.
func (s Stores) Source() authzrbac.Source { return storeSource(s) }

type storeSource Stores

var _ authzrbac.Source = storeSource{}

func (s storeSource) GetRole(ctx context.Context, namespace, name string) (*rbacv1.Role, error) {
	obj, err := s.Roles.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.Role), nil
}

func (s storeSource) ListRoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	obj, err := s.RoleBindings.List(request.WithNamespace(ctx, namespace), &rest.ListOptions{})
	if err != nil {
		return nil, err
	}
	list := obj.(*rbacv1.RoleBindingList)
	out := make([]*rbacv1.RoleBinding, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func (s storeSource) GetClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	obj, err := s.ClusterRoles.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*rbacv1.ClusterRole), nil
}

func (s storeSource) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	obj, err := s.ClusterRoleBindings.List(ctx, &rest.ListOptions{})
	if err != nil {
		return nil, err
	}
	list := obj.(*rbacv1.ClusterRoleBindingList)
	out := make([]*rbacv1.ClusterRoleBinding, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}
