package bootstrap

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The namespaced forms keep the namespace and follow the cluster rules.
func TestReconcileNamespaced(t *testing.T) {
	meta := func(annotations map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "kube-system", Name: "r", UID: "u", Annotations: annotations}
	}
	auto := map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}
	frozen := map[string]string{rbacv1.AutoUpdateAnnotationKey: "false"}
	expected := &rbacv1.Role{ObjectMeta: meta(auto), Rules: []rbacv1.PolicyRule{getPods}}

	role, res := ReconcileRole(&rbacv1.Role{ObjectMeta: meta(auto), Rules: []rbacv1.PolicyRule{getSecret}}, expected)
	if res.Op != OpUpdate || role.Namespace != "kube-system" || role.UID != "u" || !reflect.DeepEqual(role.Rules, []rbacv1.PolicyRule{getSecret, getPods}) {
		t.Errorf("user rule kept, missing appended: %v %+v", res.Op, role)
	}
	role, res = ReconcileRole(nil, expected)
	if res.Op != OpCreate || role.Namespace != "kube-system" || !reflect.DeepEqual(role.Rules, expected.Rules) {
		t.Errorf("created: %v %+v", res.Op, role)
	}
	if _, res = ReconcileRole(&rbacv1.Role{ObjectMeta: meta(frozen)}, expected); !res.Protected || res.Op != OpUpdate {
		t.Errorf("protected: %+v", res)
	}

	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}
	bot := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bot"}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "sa"}
	want := &rbacv1.RoleBinding{ObjectMeta: meta(auto), RoleRef: ref, Subjects: []rbacv1.Subject{sa}}
	b, bres := ReconcileRoleBinding(&rbacv1.RoleBinding{ObjectMeta: meta(auto), RoleRef: ref, Subjects: []rbacv1.Subject{bot}}, want)
	if bres.Op != OpUpdate || b.Namespace != "kube-system" || !reflect.DeepEqual(b.Subjects, []rbacv1.Subject{bot, sa}) {
		t.Errorf("user subject kept, missing appended: %v %+v", bres.Op, b)
	}
	other := ref
	other.Name = "other"
	b, bres = ReconcileRoleBinding(&rbacv1.RoleBinding{ObjectMeta: meta(auto), RoleRef: other}, want)
	if bres.Op != OpRecreate || b.RoleRef != ref || b.Namespace != "kube-system" {
		t.Errorf("changed roleRef: %v %+v", bres.Op, b)
	}
}
