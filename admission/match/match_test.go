package match

import (
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
)

func TestMatchResource(t *testing.T) {
	tests := []struct {
		patterns      []string
		resource, sub string
		want          bool
	}{
		{[]string{"pods"}, "pods", "", true},
		{[]string{"pods"}, "pods", "status", false},
		{[]string{"*"}, "pods", "", true},
		{[]string{"*"}, "pods", "status", false},
		{[]string{"*/*"}, "pods", "status", true},
		{[]string{"pods/*"}, "pods", "status", true},
		{[]string{"pods/*"}, "pods", "", true}, // kube: "*" is any subresource, none included
		{[]string{"*/status"}, "deployments", "status", true},
		{[]string{"pods/status"}, "pods", "exec", false},
	}
	for _, tc := range tests {
		if got := resource(tc.patterns, tc.resource, tc.sub); got != tc.want {
			t.Errorf("resource(%v, %s, %s) = %v", tc.patterns, tc.resource, tc.sub, got)
		}
	}
}

func TestMatchScope(t *testing.T) {
	ns, cluster := arv1.NamespacedScope, arv1.ClusterScope
	pods := &admission.Attributes{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "a"}
	nodes := &admission.Attributes{Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}
	namespace := &admission.Attributes{Resource: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Namespace: "a"}
	for _, tc := range []struct {
		scope *arv1.ScopeType
		a     *admission.Attributes
		want  bool
	}{
		{nil, pods, true}, {&ns, pods, true}, {&cluster, pods, false},
		{&ns, nodes, false}, {&cluster, nodes, true},
		{&ns, namespace, false}, {&cluster, namespace, true},
	} {
		if got := scope(tc.scope, tc.a); got != tc.want {
			t.Errorf("scope(%v, %s) = %v", tc.scope, tc.a.Resource.Resource, got)
		}
	}
}
