package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/capstan-io/capstan/request"
)

func res(verb, group, resource, sub, name string) *request.Info {
	return &request.Info{IsResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Name: name, Namespace: "ns"}
}

func path(verb, p string) *request.Info { return &request.Info{Verb: verb, Path: p} }

func TestRuleAllows(t *testing.T) {
	podsRead := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		info *request.Info
		want bool
	}{
		{"exact", podsRead, res("get", "", "pods", "", "p"), true},
		{"other verb", podsRead, res("delete", "", "pods", "", "p"), false},
		{"other group", podsRead, res("get", "apps", "pods", "", "p"), false},
		{"other resource", podsRead, res("get", "", "secrets", "", "s"), false},
		{"subresource needs its own entry", podsRead, res("get", "", "pods", "status", "p"), false},
		{"star verb", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("escalate", "", "pods", "", ""), true},
		{"star group", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"deployments"}}, res("get", "apps", "deployments", "", "d"), true},
		{"star resource covers subresources", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*"}}, res("get", "", "pods", "log", "p"), true},
		{"resource/subresource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"pods/status"}}, res("update", "", "pods", "status", "p"), true},
		{"resource/subresource is not the resource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"pods/status"}}, res("update", "", "pods", "", "p"), false},
		{"*/subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, res("get", "apps", "deployments", "scale", "d"), true},
		{"*/subresource is not another subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, res("get", "apps", "deployments", "status", "d"), false},
		{"*/subresource is not the resource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, res("get", "apps", "deployments", "", "d"), false},
		{"resourceNames match", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a", "b"}}, res("get", "", "configmaps", "", "b"), true},
		{"resourceNames do not match", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("get", "", "configmaps", "", "c"), false},
		{"resourceNames never match a list", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("list", "", "configmaps", "", ""), false},
		{"resource rule is not a path rule", podsRead, path("get", "/api"), false},
		{"path exact", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, path("get", "/healthz"), true},
		{"path exact only", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, path("get", "/healthz/etcd"), false},
		{"path prefix star", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz/*"}}, path("get", "/healthz/etcd"), true},
		{"path prefix star without slash", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/api*"}}, path("get", "/apis/apps"), true},
		{"path star", rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, path("post", "/anything"), true},
		{"path verb", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, path("post", "/x"), false},
		{"path rule is not a resource rule", rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, res("get", "", "pods", "", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RuleAllows(tt.info, &tt.rule); got != tt.want {
				t.Errorf("RuleAllows = %v, want %v", got, tt.want)
			}
		})
	}
}
