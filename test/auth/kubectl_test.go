package auth

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/internal/testkit"
)

// testCanI: kubectl auth can-i, one answer and the list, as grace.
func testCanI(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	ns := namespace(t, admin)
	grace := newUser(t, s, "grace")
	canI := func(args ...string) (string, error) {
		out, _, err := testkit.RunKubectl(t, grace.kubeconfig, nil, append([]string{"auth", "can-i"}, args...)...)
		return strings.TrimSpace(out), err
	}
	if out, err := canI("create", "deployments.apps", "-n", ns); out != "no" || err == nil {
		t.Errorf("before binding: %q %v, want no and a failure exit", out, err)
	}
	if out, err := canI("get", "/healthz"); out != "yes" || err != nil {
		t.Errorf("can-i get /healthz: %q %v", out, err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "grace-edits"}, RoleRef: clusterRoleRef("edit"), Subjects: userSubject("grace")}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "grace can create deployments", func(context.Context) error {
		if out, err := canI("create", "deployments.apps", "-n", ns); out != "yes" || err != nil {
			return fmt.Errorf("%q %v", out, err)
		}
		return nil
	})
	if out, _ := canI("delete", "roles.rbac.authorization.k8s.io", "-n", ns); out != "no" {
		t.Errorf("edit may not write roles: %q", out)
	}
	out, err := canI("--list", "-n", ns)
	if err != nil {
		t.Fatalf("can-i --list: %v", err)
	}
	for _, want := range []string{"Resources", "Non-Resource URLs", "selfsubjectaccessreviews.authorization.k8s.io",
		"deployments.apps", "/healthz", "[create delete deletecollection patch update]"} {
		if !strings.Contains(out, want) {
			t.Errorf("can-i --list lacks %q:\n%s", want, out)
		}
	}
}
