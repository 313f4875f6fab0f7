package auth

import (
	"context"
	"fmt"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestConstrainedImpersonation: v1.37's constrained impersonation
// (ConstrainedImpersonation, on by default in kube): impersonate:<mode> on
// who is impersonated and impersonate-on:<mode>:<verb> on the request,
// with kube's denials; the legacy impersonate verb still works, and a
// requestor's last working mode is tried first (its denial is the one
// reported).
func TestConstrainedImpersonation(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	ns := namespace(t, admin)
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	whoami := rbacv1.PolicyRule{APIGroups: []string{authenticationv1.GroupName}, Resources: []string{"selfsubjectreviews"}}
	on := func(mode string, verbs ...string) rbacv1.PolicyRule {
		r := *whoami.DeepCopy()
		for _, v := range verbs {
			r.Verbs = append(r.Verbs, "impersonate-on:"+mode+":"+v)
		}
		return r
	}
	authn := func(resource, verb string, names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{authenticationv1.GroupName}, Resources: []string{resource}, ResourceNames: names, Verbs: []string{verb}}
	}
	grant(t, admin, "imp", authn("users", "impersonate:user-info", "bob"), on("user-info", "create"),
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"impersonate-on:user-info:list"}},
		authn("groups", "impersonate:user-info", "*"), authn("nodes", "impersonate:arbitrary-node", "n1"), on("arbitrary-node", "create"),
		rbacv1.PolicyRule{APIGroups: []string{authenticationv1.GroupName}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"robot"},
			Verbs: []string{"impersonate:serviceaccount"}},
		on("serviceaccount", "create"))
	grant(t, admin, "old", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"bob"}, Verbs: []string{"impersonate"}})
	imp, old := newUser(t, s, "imp"), newUser(t, s, "old")

	as := func(u *user, name string, groups ...string) kubernetes.Interface {
		cfg := rest.CopyConfig(u.config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: name, Groups: groups}
		return kubernetes.NewForConfigOrDie(cfg)
	}
	eventually(t, "imp acts as bob", func(ctx context.Context) error {
		return wantUser(ctx, as(imp, "bob"), "bob", "system:authenticated")
	})
	// old's rights are seen by the authorizer before old tries them: its
	// first attempt must fail in the constrained modes only.
	eventually(t, "old's binding", func(ctx context.Context) error {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "old",
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "users", Name: "bob"}}}
		out, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err == nil && !out.Status.Allowed {
			err = fmt.Errorf("not allowed yet")
		}
		return err
	})
	if err := wantUser(ctx(t), as(imp, "system:node:n1"), "system:node:n1", "system:nodes", "system:authenticated"); err != nil {
		t.Errorf("a node: %v", err)
	}
	robot := "system:serviceaccount:" + ns + ":robot"
	if err := wantUser(ctx(t), as(imp, robot), robot, "system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated"); err != nil {
		t.Errorf("a service account: %v", err)
	}
	if _, err := as(imp, "bob").CoreV1().ConfigMaps(ns).List(ctx(t), metav1.ListOptions{}); err == nil || err.Error() !=
		`configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "`+ns+`"` {
		t.Errorf("a list as bob is bob's to be allowed: %v", err)
	}

	denials := []struct {
		name string
		do   func(ctx context.Context) error
		want string
	}{
		{"another verb", func(ctx context.Context) error {
			_, err := as(imp, "bob").CoreV1().ConfigMaps(ns).Get(ctx, "a", metav1.GetOptions{})
			return err
		}, `configmaps "a" is forbidden: User "imp" cannot impersonate-on:user-info:get resource "configmaps" in API group "" in the namespace "` + ns + `"`},
		{"another user", func(ctx context.Context) error { return wantUser(ctx, as(imp, "carol"), "carol") },
			`users.authentication.k8s.io "carol" is forbidden: User "imp" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope`},
		{"system:masters", func(ctx context.Context) error { return wantUser(ctx, as(imp, "bob", "system:masters"), "bob") },
			`groups.authentication.k8s.io "system:masters" is forbidden: User "imp" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed`},
		{"another node", func(ctx context.Context) error { return wantUser(ctx, as(imp, "system:node:n2"), "system:node:n2") },
			`nodes.authentication.k8s.io "n2" is forbidden: User "imp" cannot impersonate:arbitrary-node resource "nodes" in API group "authentication.k8s.io" at the cluster scope`},
		{"legacy, before it worked", func(ctx context.Context) error { return wantUser(ctx, as(old, "carol"), "carol") },
			`selfsubjectreviews.authentication.k8s.io is forbidden: User "old" cannot impersonate-on:user-info:create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope`},
		{"legacy works", func(ctx context.Context) error { return wantUser(ctx, as(old, "bob"), "bob", "system:authenticated") }, ""},
		{"legacy, tried first once it worked", func(ctx context.Context) error { return wantUser(ctx, as(old, "carol"), "carol") },
			`users "carol" is forbidden: User "old" cannot impersonate resource "users" in API group "" at the cluster scope`},
	}
	for _, d := range denials {
		err := d.do(ctx(t))
		if got := ""; err != nil {
			got = err.Error()
			if got != d.want {
				t.Errorf("%s:\ngot  %s\nwant %s", d.name, got, d.want)
			}
		} else if d.want != "" {
			t.Errorf("%s: allowed, want %s", d.name, d.want)
		}
	}
}

// grant binds the user to a cluster role of rules.
func grant(t *testing.T, admin kubernetes.Interface, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	name := "impersonation-" + user
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: clusterRoleRef(name), Subjects: userSubject(user)}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx(t), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// wantUser asks who the client is and wants name with exactly groups.
func wantUser(ctx context.Context, c kubernetes.Interface, name string, groups ...string) error {
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if u := r.Status.UserInfo; u.Username != name || !slices.Equal(u.Groups, groups) {
		return fmt.Errorf("acting as %s %v, want %s %v", u.Username, u.Groups, name, groups)
	}
	return nil
}
