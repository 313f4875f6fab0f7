package authz

import (
	"context"
	"strings"
	"testing"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

func TestValidateModes(t *testing.T) {
	tests := []struct {
		modes []string
		want  string // substring of the error; "" for none
	}{
		{[]string{"RBAC"}, ""},
		{[]string{"AlwaysAllow"}, ""},
		{[]string{"RBAC", "AlwaysDeny"}, ""},
		{nil, "at least one authorization-mode must be passed"},
		{[]string{"rbac"}, `authorization-mode "rbac" is not a valid mode`},
		{[]string{"Node", "RBAC"}, ""},
		{[]string{"Webhook", "ABAC"}, ""},
		{[]string{"RBAC", "RBAC"}, `has mode specified more than once`},
	}
	for _, tt := range tests {
		err := ValidateModes(tt.modes)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: unexpected error %v", tt.modes, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: error %v, want %q", tt.modes, err, tt.want)
		}
	}
}

func TestForModes(t *testing.T) {
	admin := &authn.User{Name: "admin", Groups: []string{"system:masters"}}
	alice := &authn.User{Name: "alice", Groups: []string{"system:authenticated"}}
	info := &request.Info{IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "ns"}
	noRBAC := AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return NoOpinion, "", nil })
	tests := []struct {
		modes      []string
		user       *authn.User
		want       Decision
		wantReason string
	}{
		{[]string{"AlwaysDeny"}, admin, Allow, ""},
		{[]string{"AlwaysDeny"}, alice, NoOpinion, "alwaysdeny: Everything is forbidden."},
		{[]string{"AlwaysAllow"}, alice, Allow, ""},
		{[]string{"RBAC"}, alice, NoOpinion, ""},
		{[]string{"RBAC", "AlwaysAllow"}, alice, Allow, ""},
	}
	for _, tt := range tests {
		a, err := ForModes(tt.modes, ModeAuthorizers{RBAC: noRBAC})
		if err != nil {
			t.Fatal(err)
		}
		d, reason, _ := a.Authorize(context.Background(), Attributes{User: tt.user, Info: info})
		if d != tt.want || reason != tt.wantReason {
			t.Errorf("%v as %s: got %v %q, want %v %q", tt.modes, tt.user.Name, d, reason, tt.want, tt.wantReason)
		}
	}
	if _, err := ForModes([]string{"RBAC"}, ModeAuthorizers{}); err == nil {
		t.Error("RBAC without an RBAC authorizer: no error")
	}
}
