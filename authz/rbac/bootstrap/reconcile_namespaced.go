package bootstrap

import rbacv1 "k8s.io/api/rbac/v1"

// ReconcileRole is ReconcileClusterRole for a namespaced Role: a Role is a
// ClusterRole without aggregation, so both follow the same rules.
func ReconcileRole(existing, expected *rbacv1.Role) (*rbacv1.Role, RoleResult) {
	var have *rbacv1.ClusterRole
	if existing != nil {
		have = &rbacv1.ClusterRole{ObjectMeta: existing.ObjectMeta, Rules: existing.Rules}
	}
	res := ReconcileClusterRole(have, &rbacv1.ClusterRole{ObjectMeta: expected.ObjectMeta, Rules: expected.Rules})
	return &rbacv1.Role{ObjectMeta: res.Role.ObjectMeta, Rules: res.Role.Rules}, res
}

// ReconcileRoleBinding is ReconcileClusterRoleBinding for a RoleBinding.
func ReconcileRoleBinding(existing, expected *rbacv1.RoleBinding) (*rbacv1.RoleBinding, BindingResult) {
	var have *rbacv1.ClusterRoleBinding
	if existing != nil {
		have = &rbacv1.ClusterRoleBinding{ObjectMeta: existing.ObjectMeta, RoleRef: existing.RoleRef, Subjects: existing.Subjects}
	}
	res := ReconcileClusterRoleBinding(have, &rbacv1.ClusterRoleBinding{ObjectMeta: expected.ObjectMeta, RoleRef: expected.RoleRef, Subjects: expected.Subjects})
	b := res.Binding
	return &rbacv1.RoleBinding{ObjectMeta: b.ObjectMeta, RoleRef: b.RoleRef, Subjects: b.Subjects}, res
}
