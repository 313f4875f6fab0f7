package bootstrap

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// namespacedRole reconciles one Role in its namespace.
func (r Reconciler) reconcileRole(ctx context.Context, expected *rbacv1.Role, prior listed[rbacv1.Role], attempt int) error {
	if attempt >= maxAttempts {
		return errors.New("exceeded maximum attempts")
	}
	client := r.Client.Roles(expected.Namespace)
	existing, err := prior.get(func() (*rbacv1.Role, error) { return client.Get(ctx, expected.Name, metav1.GetOptions{}) })
	if err != nil {
		return err
	}
	role, res := ReconcileRole(existing, expected)
	switch {
	case res.Protected && res.Op != OpNone:
		r.Logger.Warn("skipped reconcile-protected role with missing permissions", "namespace", expected.Namespace, "role", expected.Name, "missing", res.MissingRules)
	case res.Op == OpCreate:
		if err := r.ensureNamespace(ctx, expected.Namespace); err != nil {
			return err
		}
		_, err = client.Create(ctx, role, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return r.reconcileRole(ctx, expected, listed[rbacv1.Role]{}, attempt+1)
		}
	case res.Op == OpUpdate:
		_, err = client.Update(ctx, role, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return r.reconcileRole(ctx, expected, listed[rbacv1.Role]{}, attempt+1)
		}
	}
	return err
}

// namespacedBinding reconciles one RoleBinding in its namespace.
func (r Reconciler) reconcileRoleBinding(ctx context.Context, expected *rbacv1.RoleBinding, prior listed[rbacv1.RoleBinding], attempt int) error {
	if attempt >= maxAttempts {
		return errors.New("exceeded maximum attempts")
	}
	client := r.Client.RoleBindings(expected.Namespace)
	existing, err := prior.get(func() (*rbacv1.RoleBinding, error) { return client.Get(ctx, expected.Name, metav1.GetOptions{}) })
	if err != nil {
		return err
	}
	binding, res := ReconcileRoleBinding(existing, expected)
	switch {
	case res.Protected && res.Op != OpNone:
		r.Logger.Warn("skipped reconcile-protected rolebinding with missing subjects", "namespace", expected.Namespace, "rolebinding", expected.Name, "missing", res.MissingSubjects)
		return nil
	case res.Op == OpRecreate:
		err = client.Delete(ctx, existing.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &existing.UID}})
		if apierrors.IsConflict(err) {
			return r.reconcileRoleBinding(ctx, expected, listed[rbacv1.RoleBinding]{}, attempt+1)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		fallthrough
	case res.Op == OpCreate:
		if err := r.ensureNamespace(ctx, expected.Namespace); err != nil {
			return err
		}
		_, err = client.Create(ctx, binding, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return r.reconcileRoleBinding(ctx, expected, listed[rbacv1.RoleBinding]{}, attempt+1)
		}
	case res.Op == OpUpdate:
		_, err = client.Update(ctx, binding, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return r.reconcileRoleBinding(ctx, expected, listed[rbacv1.RoleBinding]{}, attempt+1)
		}
	}
	return err
}

// ensureNamespace creates a missing namespace before the first object in it,
// as kube's reconciliation does: the bootstrap policy may run before the
// system namespaces controller has made kube-system and kube-public.
// Without a namespaces client it leaves the create to fail and be retried.
func (r Reconciler) ensureNamespace(ctx context.Context, name string) error {
	if r.Namespaces == nil {
		return nil
	}
	_, err := r.Namespaces.Get(ctx, name, metav1.GetOptions{})
	if err == nil || !(apierrors.IsNotFound(err) || apierrors.IsForbidden(err)) {
		return err
	}
	_, err = r.Namespaces.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) || apierrors.IsForbidden(err) {
		return nil
	}
	return err
}
