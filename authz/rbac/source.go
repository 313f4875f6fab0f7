// Package rbac is kube's Role-Based Access Control authorizer: a request is
// allowed when a rule of a Role or ClusterRole bound to its user (by name,
// group or service account) matches it. It also holds the escalation check
// of the RBAC registry: nobody may grant permissions they do not hold.
//
// The authorizer reads the registry until its informers, started once the
// bootstrap policy is written, have synced; they do not hold /readyz.
package rbac

import (
	"context"
	"errors"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"
)

// RoleGetter reads one Role.
type RoleGetter interface {
	GetRole(ctx context.Context, namespace, name string) (*rbacv1.Role, error)
}

// RoleBindingLister lists the RoleBindings of one namespace.
type RoleBindingLister interface {
	ListRoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error)
}

// ClusterRoleGetter reads one ClusterRole.
type ClusterRoleGetter interface {
	GetClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error)
}

// ClusterRoleBindingLister lists every ClusterRoleBinding.
type ClusterRoleBindingLister interface {
	ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error)
}

// Source is where RBAC objects are read: the informers' caches, or the
// registry itself. Objects it returns are shared and must not be changed.
type Source interface {
	RoleGetter
	RoleBindingLister
	ClusterRoleGetter
	ClusterRoleBindingLister
}

// ErrNotReady is what a Deferred source answers before it has a source.
var ErrNotReady = errors.New("the RBAC objects are not readable yet")

// Deferred is a Source that reads from another one, set (and replaced)
// later: the authorizer is built before the storage it reads from exists,
// reads the registry directly until the informers' caches have synced, and
// the caches after. The zero value reads nothing and answers ErrNotReady.
type Deferred struct {
	current atomic.Pointer[sourceBox]
}

type sourceBox struct{ Source }

// Set makes d read from s.
func (d *Deferred) Set(s Source) { d.current.Store(&sourceBox{s}) }

func (d *Deferred) source() (Source, error) {
	b := d.current.Load()
	if b == nil {
		return nil, ErrNotReady
	}
	return b.Source, nil
}

// GetRole reads through the current source.
func (d *Deferred) GetRole(ctx context.Context, namespace, name string) (*rbacv1.Role, error) {
	s, err := d.source()
	if err != nil {
		return nil, err
	}
	return s.GetRole(ctx, namespace, name)
}

// ListRoleBindings reads through the current source.
func (d *Deferred) ListRoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	s, err := d.source()
	if err != nil {
		return nil, err
	}
	return s.ListRoleBindings(ctx, namespace)
}

// GetClusterRole reads through the current source.
func (d *Deferred) GetClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	s, err := d.source()
	if err != nil {
		return nil, err
	}
	return s.GetClusterRole(ctx, name)
}

// ListClusterRoleBindings reads through the current source.
func (d *Deferred) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	s, err := d.source()
	if err != nil {
		return nil, err
	}
	return s.ListClusterRoleBindings(ctx)
}
