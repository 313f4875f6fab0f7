package bootstrap

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/internal/parallel"
)

// listed is what a list said of one object, when the list could be read:
// the first attempt at the object starts from it instead of reading it
// again, and a later attempt (after a conflict, or when the object came
// or went meanwhile) reads it afresh. A stale entry cannot do harm: the
// update it leads to conflicts, or the create finds the object exists.
type listed[T any] struct {
	obj   *T // nil: the list did not have it
	valid bool
}

// get returns the listed object, or reads it with read; nil if it does not
// exist.
func (l listed[T]) get(read func() (*T, error)) (*T, error) {
	if l.valid {
		return l.obj, nil
	}
	obj, err := read()
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

// storedPolicy is the stored policy, read with one list per kind, keyed
// by namespace/name. A kind whose list failed is left nil: its objects are
// then read one by one.
type storedPolicy struct {
	clusterRoles        map[string]*rbacv1.ClusterRole
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding
	roles               map[string]*rbacv1.Role
	roleBindings        map[string]*rbacv1.RoleBinding
}

func (r Reconciler) readPolicy(ctx context.Context) storedPolicy {
	var p storedPolicy
	all := metav1.ListOptions{}
	_ = parallel.Do(0,
		func() error {
			l, err := r.Client.ClusterRoles().List(ctx, all)
			if err == nil {
				p.clusterRoles = byKey(l.Items)
			}
			return nil
		},
		func() error {
			l, err := r.Client.ClusterRoleBindings().List(ctx, all)
			if err == nil {
				p.clusterRoleBindings = byKey(l.Items)
			}
			return nil
		},
		func() error {
			l, err := r.Client.Roles(metav1.NamespaceAll).List(ctx, all)
			if err == nil {
				p.roles = byKey(l.Items)
			}
			return nil
		},
		func() error {
			l, err := r.Client.RoleBindings(metav1.NamespaceAll).List(ctx, all)
			if err == nil {
				p.roleBindings = byKey(l.Items)
			}
			return nil
		})
	return p
}

func byKey[T any, PT interface {
	*T
	metav1.Object
}](items []T) map[string]*T {
	out := make(map[string]*T, len(items))
	for i := range items {
		out[key(PT(&items[i]))] = &items[i]
	}
	return out
}

func key(o metav1.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// lookup is what a list said of the object at key; nothing without a list.
func lookup[T any](m map[string]*T, key string) listed[T] {
	if m == nil {
		return listed[T]{}
	}
	return listed[T]{obj: m[key], valid: true}
}
