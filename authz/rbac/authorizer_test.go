package rbac

import (
	"context"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func crb(name, roleName string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName}, Subjects: subjects}
}

func rb(ns, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}, Subjects: subjects}
}

func userSubject(n string) rbacv1.Subject  { return rbacv1.Subject{Kind: rbacv1.UserKind, Name: n} }
func groupSubject(n string) rbacv1.Subject { return rbacv1.Subject{Kind: rbacv1.GroupKind, Name: n} }
func saSubject(ns, n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: n}
}

var (
	readPods  = rbacv1.PolicyRule{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	writePods = rbacv1.PolicyRule{Verbs: []string{"create", "delete"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	healthz   = rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/healthz/*"}}
)

func testSource() *StaticSource {
	return &StaticSource{
		ClusterRoles: []*rbacv1.ClusterRole{clusterRole("reader", readPods), clusterRole("health", healthz)},
		Roles:        []*rbacv1.Role{role("dev", "writer", writePods)},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{
			crb("health", "health", groupSubject("system:authenticated")),
			crb("dangling", "gone", userSubject("mallory")),
		},
		RoleBindings: []*rbacv1.RoleBinding{
			rb("dev", "alice-writes", "Role", "writer", userSubject("alice")),
			rb("dev", "devs-read", "ClusterRole", "reader", groupSubject("devs")),
			rb("dev", "robot-reads", "ClusterRole", "reader", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "robot"}),
			rb("prod", "ci-reads", "ClusterRole", "reader", saSubject("ci", "builder")),
		},
	}
}

func TestAuthorize(t *testing.T) {
	a := New(testSource())
	alice := &authn.User{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	bob := &authn.User{Name: "bob", Groups: []string{"system:authenticated"}}
	tests := []struct {
		name       string
		user       *authn.User
		info       *request.Info
		want       authz.Decision
		wantReason string
	}{
		{"user binding to a role", alice, &request.Info{IsResourceRequest: true, Verb: "create", Resource: "pods", Namespace: "dev"},
			authz.Allow, `RBAC: allowed by RoleBinding "alice-writes/dev" of Role "writer" to User "alice"`},
		{"group binding to a cluster role", alice, &request.Info{IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "dev"},
			authz.Allow, `RBAC: allowed by RoleBinding "devs-read/dev" of ClusterRole "reader" to Group "devs"`},
		{"role bindings stay in their namespace", alice, &request.Info{IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "prod"},
			authz.NoOpinion, ""},
		{"no binding", bob, &request.Info{IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "dev"},
			authz.NoOpinion, ""},
		{"cluster binding for a path", bob, &request.Info{Verb: "get", Path: "/healthz/etcd"},
			authz.Allow, `RBAC: allowed by ClusterRoleBinding "health" of ClusterRole "health" to Group "system:authenticated"`},
		{"service account, namespace defaulted to the binding's", &authn.User{Name: "system:serviceaccount:dev:robot"},
			&request.Info{IsResourceRequest: true, Verb: "get", Resource: "pods", Name: "p", Namespace: "dev"},
			authz.Allow, `RBAC: allowed by RoleBinding "robot-reads/dev" of ClusterRole "reader" to ServiceAccount "robot/dev"`},
		{"service account of another namespace", &authn.User{Name: "system:serviceaccount:ci:builder"},
			&request.Info{IsResourceRequest: true, Verb: "get", Resource: "pods", Name: "p", Namespace: "prod"},
			authz.Allow, `RBAC: allowed by RoleBinding "ci-reads/prod" of ClusterRole "reader" to ServiceAccount "builder/ci"`},
		{"not that service account", &authn.User{Name: "system:serviceaccount:ci:builder2"},
			&request.Info{IsResourceRequest: true, Verb: "get", Resource: "pods", Name: "p", Namespace: "prod"}, authz.NoOpinion, ""},
		{"a missing role is the reason", &authn.User{Name: "mallory"}, &request.Info{Verb: "get", Path: "/"},
			authz.NoOpinion, `RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found`},
		{"no user", nil, &request.Info{Verb: "get", Path: "/healthz"}, authz.NoOpinion, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reason, err := a.Authorize(context.Background(), authz.Attributes{User: tt.user, Info: tt.info})
			if err != nil {
				t.Fatal(err)
			}
			if d != tt.want || reason != tt.wantReason {
				t.Errorf("got %v %q\nwant %v %q", d, reason, tt.want, tt.wantReason)
			}
		})
	}
}

func TestRulesFor(t *testing.T) {
	a := New(testSource())
	alice := &authn.User{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	rules, err := a.RulesFor(context.Background(), alice, "dev")
	if err != nil {
		t.Fatal(err)
	}
	var resources []string
	for _, r := range rules.Resource {
		resources = append(resources, r.Verbs...)
	}
	if want := []string{"get", "list", "watch", "create", "delete"}; !sameSet(resources, want) {
		t.Errorf("resource verbs %v, want %v", resources, want)
	}
	if len(rules.NonResource) != 1 || rules.NonResource[0].NonResourceURLs[0] != "/healthz" {
		t.Errorf("non-resource rules %+v", rules.NonResource)
	}
	_, err = a.RulesFor(context.Background(), &authn.User{Name: "mallory"}, "")
	if err == nil {
		t.Error("a dangling binding gives no error")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestDeferred(t *testing.T) {
	var d Deferred
	if _, err := d.ListClusterRoleBindings(context.Background()); err != ErrNotReady {
		t.Fatalf("unset: err = %v", err)
	}
	d.Set(testSource())
	if got, err := d.GetClusterRole(context.Background(), "reader"); err != nil || got.Name != "reader" {
		t.Fatalf("set: %v %v", got, err)
	}
}
