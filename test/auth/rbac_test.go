package auth

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/internal/testkit"
)

func clusterRoleRef(name string) rbacv1.RoleRef {
	return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
}

func userSubject(name string) []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}
}

var podReader = []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}}}

// TestAuthorization runs against one server: RBAC as a user meets it.
func TestAuthorization(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	t.Run("forbidden until bound", func(t *testing.T) { testForbiddenUntilBound(t, s, admin) })
	t.Run("escalation", func(t *testing.T) { testEscalation(t, s, admin) })
	t.Run("cluster-admin", func(t *testing.T) { testClusterAdmin(t, s, admin) })
	t.Run("kubectl auth can-i", func(t *testing.T) { testCanI(t, s, admin) })
	t.Run("bootstrap policy", func(t *testing.T) { testBootstrapPolicy(t, s, admin) })
	t.Run("anonymous", func(t *testing.T) { testAnonymous(t, s) })
	t.Run("resourceNames on lists", func(t *testing.T) { testResourceNamesOnLists(t, s, admin) })
}

// testResourceNamesOnLists: a rule with resourceNames allows a list or
// watch narrowed to one of its names by a metadata.name field selector
// (how client-go's informers of one object ask), as kube's request info
// names such requests; any other list stays forbidden.
func testResourceNamesOnLists(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	carol := newUser(t, s, "carol")
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "cm1-reader"}, Rules: []rbacv1.PolicyRule{{
		Verbs: []string{"list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cm1"}}}}
	if _, err := admin.RbacV1().Roles("default").Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol-reads-cm1"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "cm1-reader"}, Subjects: userSubject("carol")}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := carol.client.CoreV1().ConfigMaps("default")
	eventually(t, "carol lists cm1", func(ctx context.Context) error {
		_, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=cm1"})
		return err
	})
	w, err := cms.Watch(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=cm1"})
	if err != nil {
		t.Fatalf("watch of cm1: %v", err)
	}
	w.Stop()
	for _, sel := range []string{"", "metadata.name=cm2", "metadata.name!=cm1", "metadata.name=cm1,metadata.name"} {
		_, err := cms.List(ctx(t), metav1.ListOptions{FieldSelector: sel})
		if !apierrors.IsForbidden(err) {
			t.Errorf("list with field selector %q: %v, want 403", sel, err)
		}
	}
}

func testForbiddenUntilBound(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	alice := newUser(t, s, "alice", "devs")
	_, err := alice.client.CoreV1().Pods("default").List(ctx(t), metav1.ListOptions{})
	want := `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("before binding: %v\nwant 403 %s", err, want)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"}, Rules: podReader}
	if _, err := admin.RbacV1().Roles("default").Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-reads-pods"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"}, Subjects: userSubject("alice")}
	if _, err := admin.RbacV1().RoleBindings("default").Create(ctx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "alice lists pods", func(ctx context.Context) error {
		_, err := alice.client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		return err
	})
	// An admin may ask the same question for alice, as webhooks do.
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"devs"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "default"}}}
	out, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx(t), sar, metav1.CreateOptions{})
	wantReason := `RBAC: allowed by RoleBinding "alice-reads-pods/default" of Role "pod-reader" to User "alice"`
	if err != nil || !out.Status.Allowed || out.Status.Reason != wantReason {
		t.Errorf("SubjectAccessReview: %+v %v, want allowed: %s", out.Status, err, wantReason)
	}
	lsar := &authorizationv1.LocalSubjectAccessReview{Spec: sar.Spec}
	lout, err := admin.AuthorizationV1().LocalSubjectAccessReviews("default").Create(ctx(t), lsar, metav1.CreateOptions{})
	if err != nil || !lout.Status.Allowed || lout.Namespace != "default" {
		t.Errorf("LocalSubjectAccessReview: %+v %v", lout, err)
	}
	// The binding is for default only, and for reading.
	if _, err := alice.client.CoreV1().Pods("kube-system").List(ctx(t), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("pods in kube-system: %v, want 403", err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if _, err := alice.client.CoreV1().Pods("default").Create(ctx(t), pod, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create pod: %v, want 403", err)
	}
}

// testEscalation: carol may write roles and bindings in her namespace but
// holds only read on pods; she cannot grant more, until given escalate.
func testEscalation(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	ns := namespace(t, admin)
	carol := newUser(t, s, "carol")
	// Not "*", which would include the escalate and bind verbs.
	writer := append([]rbacv1.PolicyRule{{Verbs: []string{"create", "get", "list", "update", "patch", "delete"},
		APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles", "rolebindings"}}}, podReader...)
	bind(t, admin, ns, "carol-writes-rbac", writer, "carol")

	secrets := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "secret-reader"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"secrets"}}}}
	var err error
	eventually(t, "carol may create roles", func(ctx context.Context) error {
		_, err = carol.client.RbacV1().Roles(ns).Create(ctx, secrets, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "attempting to grant") {
			return nil
		}
		return fmt.Errorf("got %v", err)
	})
	want := `roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "carol" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
	// What she holds, she may grant.
	readers := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "readers"}, Rules: podReader}
	if _, err := carol.client.RbacV1().Roles(ns).Create(ctx(t), readers, metav1.CreateOptions{}); err != nil {
		t.Errorf("role within her rights: %v", err)
	}
	// Binding cluster-admin would grant everything.
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol-admin"}, RoleRef: clusterRoleRef("cluster-admin"), Subjects: userSubject("carol")}
	if _, err := carol.client.RbacV1().RoleBindings(ns).Create(ctx(t), rb, metav1.CreateOptions{}); !apierrors.IsForbidden(err) ||
		!strings.Contains(err.Error(), `rolebindings.rbac.authorization.k8s.io "carol-admin" is forbidden: user "carol"`) {
		t.Errorf("binding cluster-admin: %v, want 403", err)
	}
	// A binding to a role she could grant is fine.
	rb = &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "dave-reads"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "readers"}, Subjects: userSubject("dave")}
	if _, err := carol.client.RbacV1().RoleBindings(ns).Create(ctx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Errorf("binding a role within her rights: %v", err)
	}
	// Given escalate on roles, she may write any rules into a role.
	bind(t, admin, ns, "carol-escalates", []rbacv1.PolicyRule{{Verbs: []string{"escalate"},
		APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}}}, "carol")
	eventually(t, "carol escalates", func(ctx context.Context) error {
		_, err := carol.client.RbacV1().Roles(ns).Create(ctx, secrets, metav1.CreateOptions{})
		return err
	})
}

// bind creates a Role of rules in ns and binds it to the user.
func bind(t *testing.T, admin kubernetes.Interface, ns, name string, rules []rbacv1.PolicyRule, user string) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, Subjects: userSubject(user)}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

var nsCount int

func namespace(t *testing.T, admin kubernetes.Interface) string {
	t.Helper()
	nsCount++
	name := fmt.Sprintf("auth-%d", nsCount)
	if _, err := admin.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// testClusterAdmin: a group bound to cluster-admin may do anything, and
// grant anything.
func testClusterAdmin(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	erin := newUser(t, s, "erin", "ops")
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ops-admin"}, RoleRef: clusterRoleRef("cluster-admin"),
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "ops"}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx(t), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "erin lists namespaces", func(ctx context.Context) error {
		_, err := erin.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		return err
	})
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "everything"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, {Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
		AggregationRule: nil}
	if _, err := erin.client.RbacV1().ClusterRoles().Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Errorf("cluster-admin grants everything: %v", err)
	}
	body, err := erin.client.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx(t))
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("non-resource path: %v %s", err, body)
	}
}

// testBootstrapPolicy: kube's default roles and bindings are there, and
// admin, edit and view have aggregated their rules.
func testBootstrapPolicy(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	roles, err := admin.RbacV1().ClusterRoles().List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range roles.Items {
		names = append(names, r.Name)
	}
	for _, want := range []string{"cluster-admin", "admin", "edit", "view", "system:basic-user", "system:discovery",
		"system:public-info-viewer", "system:monitoring", "system:aggregate-to-admin"} {
		if !slices.Contains(names, want) {
			t.Errorf("cluster role %s missing from %v", want, names)
		}
	}
	crb, err := admin.RbacV1().ClusterRoleBindings().Get(ctx(t), "cluster-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if crb.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" || crb.Subjects[0].Name != "system:masters" {
		t.Errorf("cluster-admin binding: %+v", crb)
	}
	eventually(t, "admin aggregates edit, view and aggregate-to-admin", func(ctx context.Context) error {
		r, err := admin.RbacV1().ClusterRoles().Get(ctx, "admin", metav1.GetOptions{})
		if err != nil {
			return err
		}
		var resources []string
		for _, rule := range r.Rules {
			resources = append(resources, rule.Resources...)
		}
		for _, want := range []string{"rolebindings", "secrets", "pods/log", "deployments"} {
			if !slices.Contains(resources, want) {
				return fmt.Errorf("admin lacks %s: %v", want, resources)
			}
		}
		return nil
	})
	// A user bound to edit in a namespace may now create pods there.
	ns := namespace(t, admin)
	frank := newUser(t, s, "frank")
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "frank-edits"}, RoleRef: clusterRoleRef("edit"), Subjects: userSubject("frank")}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx(t), rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	eventually(t, "frank edits", func(ctx context.Context) error {
		_, err := frank.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
}

// testAnonymous: the public paths, through system:public-info-viewer.
func testAnonymous(t *testing.T, s *testkit.Server) {
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: insecureTLS()}}
	for path, want := range map[string]int{"/healthz": 200, "/livez": 200, "/readyz": 200, "/version": 200, "/api": 403, "/api/v1/pods": 403} {
		resp, err := client.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("anonymous GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
