package auth

import (
	"context"
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/internal/testkit"
)

var getWidgets = rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}

// TestReconcileKeepsAdditions: what an admin adds to the bootstrap policy
// survives a restart's reconciliation, which only adds what is missing.
func TestReconcileKeepsAdditions(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	rbac := admin.RbacV1()

	// A rule added to a bootstrap role, a subject to a bootstrap binding.
	update(t, admin, "system:basic-user", func(r *rbacv1.ClusterRole) { r.Rules = append(r.Rules, getWidgets) })
	crb, err := rbac.ClusterRoleBindings().Get(ctx(t), "system:discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crb.Subjects = append(crb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bot"})
	if _, err := rbac.ClusterRoleBindings().Update(ctx(t), crb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// admin takes its rules from the roles labeled to aggregate into it:
	// that is how kube users extend it.
	extra := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "widgets-admin",
		Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}, Rules: []rbacv1.PolicyRule{getWidgets}}
	if _, err := rbac.ClusterRoles().Create(ctx(t), extra, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// edit opted out of updates and rewritten by hand.
	custom := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}
	update(t, admin, "edit", func(r *rbacv1.ClusterRole) {
		r.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
		r.AggregationRule = nil
		r.Rules = []rbacv1.PolicyRule{custom}
	})
	// A deleted bootstrap role comes back.
	if err := rbac.ClusterRoles().Delete(ctx(t), "system:monitoring", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The same for the namespaced bootstrap policy.
	roles := rbac.Roles("kube-system")
	updateRole(t, admin, "system:controller:token-cleaner", func(r *rbacv1.Role) { r.Rules = append(r.Rules, getWidgets) })
	rb, err := rbac.RoleBindings("kube-system").Get(ctx(t), "system:controller:cloud-provider", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bot"})
	if _, err := rbac.RoleBindings("kube-system").Update(ctx(t), rb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	updateRole(t, admin, "system:controller:cloud-provider", func(r *rbacv1.Role) {
		r.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
		r.Rules = []rbacv1.PolicyRule{custom}
	})
	if err := roles.Delete(ctx(t), "system:controller:bootstrap-signer", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	s.Restart(t)
	admin = s.Client(t)
	rbac = admin.RbacV1()
	roles = rbac.Roles("kube-system")

	basic, err := rbac.ClusterRoles().Get(ctx(t), "system:basic-user", metav1.GetOptions{})
	if err != nil || !hasRule(basic.Rules, getWidgets) || len(basic.Rules) != 3 {
		t.Errorf("system:basic-user after restart: %v %v", basic.Rules, err)
	}
	crb, err = rbac.ClusterRoleBindings().Get(ctx(t), "system:discovery", metav1.GetOptions{})
	if err != nil || len(crb.Subjects) != 2 || crb.Subjects[1].Name != "bot" {
		t.Errorf("system:discovery binding after restart: %v %v", crb.Subjects, err)
	}
	eventually(t, "admin aggregates widgets", func(ctx context.Context) error {
		r, err := rbac.ClusterRoles().Get(ctx, "admin", metav1.GetOptions{})
		if err != nil || !hasRule(r.Rules, getWidgets) {
			return fmt.Errorf("admin rules %v %v", r.Rules, err)
		}
		return nil
	})
	edit, err := rbac.ClusterRoles().Get(ctx(t), "edit", metav1.GetOptions{})
	if err != nil || edit.AggregationRule != nil || len(edit.Rules) != 1 || !hasRule(edit.Rules, custom) {
		t.Errorf("protected edit after restart: %+v %v", edit, err)
	}
	if _, err := rbac.ClusterRoles().Get(ctx(t), "system:monitoring", metav1.GetOptions{}); err != nil {
		t.Errorf("system:monitoring not recreated: %v", err)
	}

	cleaner, err := roles.Get(ctx(t), "system:controller:token-cleaner", metav1.GetOptions{})
	if err != nil || !hasRule(cleaner.Rules, getWidgets) || len(cleaner.Rules) != 3 {
		t.Errorf("token-cleaner role after restart: %v %v", cleaner.Rules, err)
	}
	rb, err = rbac.RoleBindings("kube-system").Get(ctx(t), "system:controller:cloud-provider", metav1.GetOptions{})
	if err != nil || len(rb.Subjects) != 2 || rb.Subjects[1].Name != "bot" {
		t.Errorf("cloud-provider binding after restart: %v %v", rb.Subjects, err)
	}
	cloud, err := roles.Get(ctx(t), "system:controller:cloud-provider", metav1.GetOptions{})
	if err != nil || len(cloud.Rules) != 1 || !hasRule(cloud.Rules, custom) {
		t.Errorf("protected cloud-provider role after restart: %+v %v", cloud, err)
	}
	if _, err := roles.Get(ctx(t), "system:controller:bootstrap-signer", metav1.GetOptions{}); err != nil {
		t.Errorf("kube-system bootstrap-signer role not recreated: %v", err)
	}
}

func updateRole(t *testing.T, admin kubernetes.Interface, name string, change func(*rbacv1.Role)) {
	t.Helper()
	for {
		r, err := admin.RbacV1().Roles("kube-system").Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(r)
		_, err = admin.RbacV1().Roles("kube-system").Update(ctx(t), r, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}

func update(t *testing.T, admin kubernetes.Interface, name string, change func(*rbacv1.ClusterRole)) {
	t.Helper()
	for {
		r, err := admin.RbacV1().ClusterRoles().Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(r)
		_, err = admin.RbacV1().ClusterRoles().Update(ctx(t), r, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}

func hasRule(rules []rbacv1.PolicyRule, want rbacv1.PolicyRule) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.Verbs, want.Verbs) && slices.Equal(r.APIGroups, want.APIGroups) && slices.Equal(r.Resources, want.Resources)
	})
}
