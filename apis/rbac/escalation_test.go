package rbac

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	authzrbac "github.com/capstan-io/capstan/authz/rbac"
	"github.com/capstan-io/capstan/request"
)

var (
	getPods    = rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	getSecrets = rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}
	escalate   = rbacv1.PolicyRule{Verbs: []string{"escalate"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}}
	bindView   = rbacv1.PolicyRule{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"secret-reader"}}
)

// testGuard: alice may read pods in ns; bob also may escalate roles and bind
// secret-reader in ns.
func testGuard() *Guard {
	cr := func(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	}
	rb := func(name, user, role string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: user}}}
	}
	src := &authzrbac.StaticSource{
		ClusterRoles: []*rbacv1.ClusterRole{cr("pod-reader", getPods), cr("secret-reader", getSecrets), cr("powers", escalate, bindView)},
		RoleBindings: []*rbacv1.RoleBinding{rb("a", "alice", "pod-reader"), rb("b", "bob", "pod-reader"), rb("c", "bob", "powers")},
	}
	a := authz.Union(authz.Named{Name: "privileged", Authorizer: authz.PrivilegedGroups("system:masters")},
		authz.Named{Name: "rbac", Authorizer: authzrbac.New(src)})
	return &Guard{Authorizer: a, Resolver: authzrbac.NewResolver(src)}
}

func requestCtx(user string, groups []string, info *request.Info) context.Context {
	ctx := authn.WithUser(context.Background(), &authn.User{Name: user, Groups: groups})
	ctx = request.WithInfo(ctx, info)
	return request.WithNamespace(ctx, info.Namespace)
}

func TestRoleEscalation(t *testing.T) {
	g := testGuard()
	st := g.RoleStorage(nil).(*guardedStore)
	createRole := &request.Info{IsResourceRequest: true, Verb: "create", APIGroup: rbacv1.GroupName, Resource: "roles", Namespace: "ns"}
	roleOf := func(rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Rules: rules}
	}
	tests := []struct {
		name    string
		user    string
		groups  []string
		role    *rbacv1.Role
		wantErr string
	}{
		{"rules the user holds", "alice", nil, roleOf(getPods), ""},
		{"rules the user lacks", "alice", nil, roleOf(getPods, getSecrets),
			`roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=[]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{"system:masters bypasses", "root", []string{"system:masters"}, roleOf(getSecrets), "bypass"},
		{"escalate verb bypasses", "bob", nil, roleOf(getSecrets), "bypass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := requestCtx(tt.user, tt.groups, createRole)
			if st.bypass(ctx) {
				if tt.wantErr != "bypass" {
					t.Fatal("bypassed")
				}
				return
			}
			err := st.check(ctx, tt.role, nil)
			if got := errText(err); got != tt.wantErr {
				t.Errorf("got  %s\nwant %s", got, tt.wantErr)
			}
			if err != nil && !apierrors.IsForbidden(err) {
				t.Errorf("not a 403: %v", err)
			}
		})
	}
}

func TestClusterRoleAggregationNeedsClusterAdmin(t *testing.T) {
	g := testGuard()
	st := g.ClusterRoleStorage(nil).(*guardedStore)
	ctx := requestCtx("alice", nil, &request.Info{IsResourceRequest: true, Verb: "create", APIGroup: rbacv1.GroupName, Resource: "clusterroles"})
	agg := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agg"}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"x": "y"}}}}}
	err := st.check(ctx, agg, nil)
	if !strings.Contains(errText(err), "must have cluster-admin privileges to use the aggregationRule") {
		t.Errorf("got %v", err)
	}
}

func TestBindingEscalation(t *testing.T) {
	g := testGuard()
	st := g.RoleBindingStorage(nil).(*guardedStore)
	binding := func(role string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "x"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
	}
	info := &request.Info{IsResourceRequest: true, Verb: "create", APIGroup: rbacv1.GroupName, Resource: "rolebindings", Namespace: "ns"}
	tests := []struct {
		name, user, role, wantErr string
	}{
		{"a role whose rules the user holds", "alice", "pod-reader", ""},
		{"a role the user could not grant", "alice", "secret-reader",
			`rolebindings.rbac.authorization.k8s.io "x" is forbidden: user "alice" (groups=[]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{"bind verb on the role", "bob", "secret-reader", ""},
		{"a missing role", "alice", "nope", `clusterrole.rbac.authorization.k8s.io "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := st.check(requestCtx(tt.user, nil, info), binding(tt.role), nil)
			if got := errText(err); got != tt.wantErr {
				t.Errorf("got  %s\nwant %s", got, tt.wantErr)
			}
		})
	}
	if !st.bypass(requestCtx("root", []string{"system:masters"}, info)) {
		t.Error("system:masters does not bypass")
	}
}

func TestOnlyGCFieldsChange(t *testing.T) {
	old := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", ResourceVersion: "5"}, Rules: []rbacv1.PolicyRule{getPods}}
	gc := old.DeepCopy()
	gc.Finalizers = []string{"foregroundDeletion"}
	gc.OwnerReferences = []metav1.OwnerReference{{Name: "o"}}
	if !OnlyGCFieldsChange(gc, old) {
		t.Error("finalizers and owners only: not recognised")
	}
	rules := old.DeepCopy()
	rules.Rules = append(rules.Rules, getSecrets)
	if OnlyGCFieldsChange(rules, old) {
		t.Error("a rule change passed as a GC change")
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
