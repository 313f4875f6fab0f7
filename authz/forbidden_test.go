package authz

import (
	"net/http"
	"testing"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

func TestForbidden(t *testing.T) {
	alice := &authn.User{Name: "alice"}
	tests := []struct {
		name   string
		info   *request.Info
		reason string
		want   string
	}{
		{"namespaced list", &request.Info{IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "default"}, "",
			`pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"`},
		{"named subresource in a group", &request.Info{IsResourceRequest: true, Verb: "update", APIGroup: "apps",
			Resource: "deployments", Subresource: "status", Name: "web", Namespace: "ns"}, "",
			`deployments.apps "web" is forbidden: User "alice" cannot update resource "deployments/status" in API group "apps" in the namespace "ns"`},
		{"cluster scope with a reason", &request.Info{IsResourceRequest: true, Verb: "list", Resource: "namespaces"},
			"rbac: RBAC: clusterrole.rbac.authorization.k8s.io \"x\" not found",
			`namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope: rbac: RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`},
		{"path", &request.Info{Verb: "get", Path: "/logs/<x>"}, "",
			`forbidden: User "alice" cannot get path "/logs/&lt;x&gt;"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Forbidden(Attributes{User: alice, Info: tt.info}, tt.reason)
			if got := err.Error(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if err.Status().Code != http.StatusForbidden {
				t.Errorf("code %d", err.Status().Code)
			}
		})
	}
}
