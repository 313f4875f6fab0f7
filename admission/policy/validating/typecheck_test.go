package validating

import (
	"slices"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRuleResources(t *testing.T) {
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	for _, tc := range []struct {
		name string
		rule arv1.Rule
		want []schema.GroupVersionResource
	}{
		{"one", arv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
			[]schema.GroupVersionResource{gvr("apps", "v1", "deployments")}},
		{"sorted product", arv1.Rule{APIGroups: []string{"b", "a"}, APIVersions: []string{"v1"}, Resources: []string{"y", "x"}},
			[]schema.GroupVersionResource{gvr("a", "v1", "x"), gvr("a", "v1", "y"), gvr("b", "v1", "x"), gvr("b", "v1", "y")}},
		{"wildcard group", arv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}, nil},
		{"wildcard version", arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Resources: []string{"pods"}}, nil},
		{"wildcard and subresources left out", arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"*", "pods/status", "pods"}},
			[]schema.GroupVersionResource{gvr("", "v1", "pods")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ruleResources(&tc.rule); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
