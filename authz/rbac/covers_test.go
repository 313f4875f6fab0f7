package rbac

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/capstan-io/capstan/authn"
)

func rule(verbs, groups, resources []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func s(v ...string) []string { return v }

func TestCovers(t *testing.T) {
	tests := []struct {
		name        string
		owner       []rbacv1.PolicyRule
		servant     []rbacv1.PolicyRule
		want        bool
		wantMissing int
	}{
		{"same", []rbacv1.PolicyRule{readPods}, []rbacv1.PolicyRule{readPods}, true, 0},
		{"subset of verbs", []rbacv1.PolicyRule{readPods}, []rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}, true, 0},
		{"more verbs", []rbacv1.PolicyRule{readPods}, []rbacv1.PolicyRule{rule(s("get", "delete", "patch"), s(""), s("pods"))}, false, 2},
		{"star covers all", FullAuthority, []rbacv1.PolicyRule{readPods, healthz, rule(s("escalate"), s("rbac.authorization.k8s.io"), s("roles"))}, true, 0},
		{"star is not covered by a list", []rbacv1.PolicyRule{readPods}, []rbacv1.PolicyRule{rule(s("*"), s(""), s("pods"))}, false, 1},
		{"*/sub covers a subresource", []rbacv1.PolicyRule{rule(s("get"), s("apps"), s("*/scale"))},
			[]rbacv1.PolicyRule{rule(s("get"), s("apps"), s("deployments/scale", "replicasets/scale"))}, true, 0},
		{"unnamed covers named", []rbacv1.PolicyRule{readPods},
			[]rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a", "b")}}, true, 0},
		{"named does not cover unnamed", []rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a")}},
			[]rbacv1.PolicyRule{rule(s("get"), s(""), s("pods"))}, false, 1},
		{"named covers the same names", []rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("a", "b")}},
			[]rbacv1.PolicyRule{{Verbs: s("get"), APIGroups: s(""), Resources: s("pods"), ResourceNames: s("b")}}, true, 0},
		{"url prefix covers", []rbacv1.PolicyRule{healthz}, []rbacv1.PolicyRule{{Verbs: s("get"), NonResourceURLs: s("/healthz/etcd")}}, true, 0},
		{"url not covered", []rbacv1.PolicyRule{healthz}, []rbacv1.PolicyRule{{Verbs: s("get", "post"), NonResourceURLs: s("/metrics", "/healthz")}}, false, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := Covers(tt.owner, tt.servant)
			if got != tt.want || len(missing) != tt.wantMissing {
				t.Errorf("Covers = %v with %d missing %v, want %v with %d", got, len(missing), missing, tt.want, tt.wantMissing)
			}
		})
	}
}

func TestCompactRules(t *testing.T) {
	_, missing := Covers(nil, []rbacv1.PolicyRule{
		rule(s("get", "list"), s("", "apps"), s("pods")),
		{Verbs: s("get", "update"), APIGroups: s(""), Resources: s("configmaps"), ResourceNames: s("a")},
		{Verbs: s("get"), NonResourceURLs: s("/x")},
	})
	var got []string
	for _, r := range CompactRules(missing) {
		got = append(got, CompactString(r))
	}
	want := []string{
		`{NonResourceURLs:["/x"], Verbs:["get"]}`,
		`{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`,
		`{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "list"]}`,
		`{APIGroups:[""], Resources:["configmaps"], ResourceNames:["a"], Verbs:["get" "update"]}`,
	}
	if !sameSet(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestConfirmNoEscalation(t *testing.T) {
	r := NewResolver(testSource())
	alice := &authn.User{Name: "alice", Groups: []string{"devs"}}
	ctx := context.Background()
	if err := r.ConfirmNoEscalation(ctx, alice, "dev", []rbacv1.PolicyRule{readPods, writePods}); err != nil {
		t.Errorf("alice holds these in dev: %v", err)
	}
	err := r.ConfirmNoEscalation(ctx, alice, "prod", []rbacv1.PolicyRule{writePods, rule(s("get"), s(""), s("secrets"))})
	want := `user "alice" (groups=["devs"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["pods"], Verbs:["create" "delete"]}
{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	err = r.ConfirmNoEscalation(ctx, &authn.User{Name: "mallory"}, "", []rbacv1.PolicyRule{readPods})
	want = `user "mallory" (groups=[]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["pods"], Verbs:["get" "list" "watch"]}; resolution errors: [clusterrole.rbac.authorization.k8s.io "gone" not found]`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
