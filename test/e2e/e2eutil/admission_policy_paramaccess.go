package e2eutil

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Grant binds a new cluster role of rules to user.
func (e *Env) Grant(t *testing.T, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	name := Unique("grant")
	rbac := e.Clientset.RbacV1()
	if _, err := rbac.ClusterRoles().Create(Ctx(t), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}
	if _, err := rbac.ClusterRoleBindings().Create(Ctx(t), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
