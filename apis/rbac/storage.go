package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	authzrbac "github.com/capstan-io/capstan/authz/rbac"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

var (
	rolesResource               = rbacv1.Resource("roles")
	clusterRolesResource        = rbacv1.Resource("clusterroles")
	roleBindingsResource        = rbacv1.Resource("rolebindings")
	clusterRoleBindingsResource = rbacv1.Resource("clusterrolebindings")
)

// RoleStorage is the roles store behind the escalation check.
func (g *Guard) RoleStorage(s *registry.Store) rest.Storage {
	return &guardedStore{Store: s, bypass: g.mayEscalate, check: func(ctx context.Context, obj, _ runtime.Object) error {
		role := obj.(*rbacv1.Role)
		return g.confirm(ctx, rolesResource, role.Name, role.Rules)
	}}
}

// ClusterRoleStorage is the clusterroles store behind the escalation check.
// Setting or changing an aggregationRule, which can gather any permission,
// takes cluster-admin's.
func (g *Guard) ClusterRoleStorage(s *registry.Store) rest.Storage {
	return &guardedStore{Store: s, bypass: g.mayEscalate, check: func(ctx context.Context, obj, old runtime.Object) error {
		role := obj.(*rbacv1.ClusterRole)
		if err := g.confirm(ctx, clusterRolesResource, role.Name, role.Rules); err != nil {
			return err
		}
		aggregated := hasAggregationRule(role)
		if o, ok := old.(*rbacv1.ClusterRole); ok && hasAggregationRule(o) {
			aggregated = true
		}
		if aggregated && g.confirm(ctx, clusterRolesResource, role.Name, authzrbac.FullAuthority) != nil {
			return apierrors.NewForbidden(clusterRolesResource, role.Name, errAggregationRule)
		}
		return nil
	}}
}

func hasAggregationRule(r *rbacv1.ClusterRole) bool {
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

// RoleBindingStorage is the rolebindings store behind the bind check.
func (g *Guard) RoleBindingStorage(s *registry.Store) rest.Storage {
	return &guardedStore{Store: s, bypass: inPrivilegedGroup, check: func(ctx context.Context, obj, _ runtime.Object) error {
		b := obj.(*rbacv1.RoleBinding)
		ns := request.NamespaceFrom(ctx)
		if ns == "" {
			return apierrors.NewBadRequest("namespace is required")
		}
		return g.checkBinding(ctx, roleBindingsResource, b.Name, b.RoleRef, ns)
	}}
}

// ClusterRoleBindingStorage is the clusterrolebindings store behind the
// bind check.
func (g *Guard) ClusterRoleBindingStorage(s *registry.Store) rest.Storage {
	return &guardedStore{Store: s, bypass: inPrivilegedGroup, check: func(ctx context.Context, obj, _ runtime.Object) error {
		b := obj.(*rbacv1.ClusterRoleBinding)
		return g.checkBinding(ctx, clusterRoleBindingsResource, b.Name, b.RoleRef, "")
	}}
}

// checkBinding lets a binding through if the user may bind its role, or
// holds every permission of the role; a missing role is its error.
func (g *Guard) checkBinding(ctx context.Context, gr schema.GroupResource, name string, ref rbacv1.RoleRef, namespace string) error {
	if g.mayBind(ctx, ref, namespace) {
		return nil
	}
	rules, err := g.Resolver.RoleRefRules(ctx, ref, namespace)
	if err != nil {
		return err
	}
	return g.confirm(ctx, gr, name, rules)
}
