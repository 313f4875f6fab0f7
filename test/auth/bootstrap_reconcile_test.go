package auth

import (
	"log/slog"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authz/rbac/bootstrap"
	"github.com/capstan-io/capstan/internal/testkit"
)

// TestBootstrapEnsureRepairsOnlyWhatChanged: the reconciler reads the
// stored policy with one list per kind and writes concurrently; it must
// still put back what was changed or deleted, and leave untouched what is
// already as the bootstrap policy wants it (no write: same resourceVersion).
func TestBootstrapEnsureRepairsOnlyWhatChanged(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	rbac := admin.RbacV1()

	// A bootstrap role loses its rules, a binding its subjects, a
	// namespaced role is deleted; another role is left alone.
	update(t, admin, "system:basic-user", func(r *rbacv1.ClusterRole) { r.Rules = nil })
	crb, err := rbac.ClusterRoleBindings().Get(ctx(t), "system:public-info-viewer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crb.Subjects = nil
	if _, err := rbac.ClusterRoleBindings().Update(ctx(t), crb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rbac.Roles("kube-system").Delete(ctx(t), "system:controller:token-cleaner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	untouched, err := rbac.ClusterRoles().Get(ctx(t), "system:discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	r := bootstrap.Reconciler{Client: rbac, Namespaces: admin.CoreV1().Namespaces(), Logger: slog.New(slog.DiscardHandler)}
	if err := r.Ensure(ctx(t)); err != nil {
		t.Fatalf("Ensure: %v", err)
	}

	// Missing rules come back broken down by resource, as kube adds them.
	whoami := rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}}
	basic, err := rbac.ClusterRoles().Get(ctx(t), "system:basic-user", metav1.GetOptions{})
	if err != nil || !hasRule(basic.Rules, whoami) {
		t.Errorf("system:basic-user rules after Ensure: %v %v, want %v among them", basic.Rules, err, whoami)
	}
	crb, err = rbac.ClusterRoleBindings().Get(ctx(t), "system:public-info-viewer", metav1.GetOptions{})
	if err != nil || len(crb.Subjects) != 2 {
		t.Errorf("system:public-info-viewer subjects after Ensure: %v %v, want its two groups", crb.Subjects, err)
	}
	if _, err := rbac.Roles("kube-system").Get(ctx(t), "system:controller:token-cleaner", metav1.GetOptions{}); err != nil {
		t.Errorf("kube-system token-cleaner role not recreated: %v", err)
	}
	after, err := rbac.ClusterRoles().Get(ctx(t), "system:discovery", metav1.GetOptions{})
	if err != nil || after.ResourceVersion != untouched.ResourceVersion {
		t.Errorf("system:discovery was written although unchanged: resourceVersion %s -> %s (%v)",
			untouched.ResourceVersion, after.ResourceVersion, err)
	}
}
