package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"
	rbacclient "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/util/retry"

	"github.com/capstan-io/capstan/internal/parallel"
)

// maxAttempts bounds the re-runs of one object that keeps appearing or
// disappearing while it is reconciled.
const maxAttempts = 3

// Reconciler brings the stored policy up to the bootstrap ClusterRoles,
// ClusterRoleBindings, Roles and RoleBindings through the API, as kube's
// rbac/bootstrap-roles post-start hook does at every start.
type Reconciler struct {
	Client rbacclient.RbacV1Interface
	// Namespaces, if set, creates a missing namespace of a Role or RoleBinding.
	Namespaces coreclient.NamespaceInterface
	Logger     *slog.Logger
}

// concurrency is how many bootstrap objects are reconciled at once: each
// mostly waits for its etcd commit, and concurrent commits share a sync.
const concurrency = 16

// Ensure reconciles every bootstrap object, carrying on past failures, and
// returns them all. Conflicts and 503s are retried. The stored policy is
// read with a list per kind rather than a get per object; the objects are
// independent of one another (a binding may name a role not yet created),
// so they are reconciled concurrently.
func (r Reconciler) Ensure(ctx context.Context) error {
	stored := r.readPolicy(ctx)
	var work []func() error
	for _, role := range ClusterRoles() {
		prior := lookup(stored.clusterRoles, key(&role))
		work = append(work, func() error {
			err := retry.OnError(retry.DefaultBackoff, retriable, func() error {
				p := prior
				prior = listed[rbacv1.ClusterRole]{}
				return r.role(ctx, &role, p, 0)
			})
			return wrap(err, "clusterrole %s", role.Name)
		})
	}
	for _, b := range ClusterRoleBindings() {
		prior := lookup(stored.clusterRoleBindings, key(&b))
		work = append(work, func() error {
			err := retry.OnError(retry.DefaultBackoff, retriable, func() error {
				p := prior
				prior = listed[rbacv1.ClusterRoleBinding]{}
				return r.binding(ctx, &b, p, 0)
			})
			return wrap(err, "clusterrolebinding %s", b.Name)
		})
	}
	for _, role := range NamespacedRoles() {
		prior := lookup(stored.roles, key(&role))
		work = append(work, func() error {
			err := retry.OnError(retry.DefaultBackoff, retriable, func() error {
				p := prior
				prior = listed[rbacv1.Role]{}
				return r.reconcileRole(ctx, &role, p, 0)
			})
			return wrap(err, "role %s/%s", role.Namespace, role.Name)
		})
	}
	for _, b := range NamespacedRoleBindings() {
		prior := lookup(stored.roleBindings, key(&b))
		work = append(work, func() error {
			err := retry.OnError(retry.DefaultBackoff, retriable, func() error {
				p := prior
				prior = listed[rbacv1.RoleBinding]{}
				return r.reconcileRoleBinding(ctx, &b, p, 0)
			})
			return wrap(err, "rolebinding %s/%s", b.Namespace, b.Name)
		})
	}
	return parallel.Do(concurrency, work...)
}

// wrap prefixes a failure with the object it is about.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

func retriable(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsServiceUnavailable(err)
}

// role reconciles one ClusterRole.
func (r Reconciler) role(ctx context.Context, expected *rbacv1.ClusterRole, prior listed[rbacv1.ClusterRole], attempt int) error {
	if attempt >= maxAttempts {
		return errors.New("exceeded maximum attempts")
	}
	client := r.Client.ClusterRoles()
	existing, err := prior.get(func() (*rbacv1.ClusterRole, error) { return client.Get(ctx, expected.Name, metav1.GetOptions{}) })
	if err != nil {
		return err
	}
	res := ReconcileClusterRole(existing, expected)
	switch {
	case res.Protected && res.Op != OpNone:
		r.Logger.Warn("skipped reconcile-protected clusterrole with missing permissions", "clusterrole", expected.Name, "missing", res.MissingRules)
	case res.Op == OpCreate:
		_, err = client.Create(ctx, res.Role, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return r.role(ctx, expected, listed[rbacv1.ClusterRole]{}, attempt+1)
		}
	case res.Op == OpUpdate:
		_, err = client.Update(ctx, res.Role, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return r.role(ctx, expected, listed[rbacv1.ClusterRole]{}, attempt+1)
		}
	}
	if err == nil && res.Op != OpNone && !res.Protected {
		r.Logger.Debug("reconciled clusterrole", "clusterrole", expected.Name, "operation", res.Op)
	}
	return err
}

// binding reconciles one ClusterRoleBinding.
func (r Reconciler) binding(ctx context.Context, expected *rbacv1.ClusterRoleBinding, prior listed[rbacv1.ClusterRoleBinding], attempt int) error {
	if attempt >= maxAttempts {
		return errors.New("exceeded maximum attempts")
	}
	client := r.Client.ClusterRoleBindings()
	existing, err := prior.get(func() (*rbacv1.ClusterRoleBinding, error) { return client.Get(ctx, expected.Name, metav1.GetOptions{}) })
	if err != nil {
		return err
	}
	res := ReconcileClusterRoleBinding(existing, expected)
	switch {
	case res.Protected && res.Op != OpNone:
		r.Logger.Warn("skipped reconcile-protected clusterrolebinding with missing subjects", "clusterrolebinding", expected.Name, "missing", res.MissingSubjects)
		return nil
	case res.Op == OpRecreate:
		err = client.Delete(ctx, existing.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &existing.UID}})
		if apierrors.IsConflict(err) {
			return r.binding(ctx, expected, listed[rbacv1.ClusterRoleBinding]{}, attempt+1)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		fallthrough
	case res.Op == OpCreate:
		_, err = client.Create(ctx, res.Binding, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return r.binding(ctx, expected, listed[rbacv1.ClusterRoleBinding]{}, attempt+1)
		}
	case res.Op == OpUpdate:
		_, err = client.Update(ctx, res.Binding, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return r.binding(ctx, expected, listed[rbacv1.ClusterRoleBinding]{}, attempt+1)
		}
	}
	return err
}
