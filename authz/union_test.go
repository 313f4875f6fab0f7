package authz

import (
	"context"
	"errors"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

func fixed(d Decision, reason string, err error) Authorizer {
	return AuthorizerFunc(func(context.Context, Attributes) (Decision, string, error) { return d, reason, err })
}

// counting records whether it was asked.
type counting struct {
	Authorizer
	asked *bool
}

func (c counting) Authorize(ctx context.Context, a Attributes) (Decision, string, error) {
	*c.asked = true
	return c.Authorizer.Authorize(ctx, a)
}

func TestUnion(t *testing.T) {
	attrs := Attributes{User: &authn.User{Name: "alice"}, Info: &request.Info{Verb: "get", Path: "/x"}}
	boom := errors.New("boom")
	tests := []struct {
		name       string
		chain      []Named
		want       Decision
		wantReason string
		wantErr    string
	}{
		{name: "zero value has no opinion, so it denies", want: NoOpinion},
		{name: "first allow wins", chain: []Named{{"a", fixed(NoOpinion, "", nil)}, {"b", fixed(Allow, "ok", nil)}},
			want: Allow, wantReason: "ok"},
		{name: "first deny wins", chain: []Named{{"a", fixed(Deny, "no", nil)}, {"b", fixed(Allow, "", nil)}},
			want: Deny, wantReason: "no"},
		{name: "no opinion continues and joins reasons", chain: []Named{
			{"rbac", fixed(NoOpinion, "RBAC: role missing", nil)}, {"quiet", fixed(NoOpinion, "", nil)},
			{"alwaysdeny", fixed(NoOpinion, "Everything is forbidden.", nil)}},
			want: NoOpinion, wantReason: "rbac: RBAC: role missing\nalwaysdeny: Everything is forbidden."},
		{name: "errors of no opinions are aggregated", chain: []Named{{"a", fixed(NoOpinion, "", boom)}, {"b", fixed(NoOpinion, "", nil)}},
			want: NoOpinion, wantErr: "boom"},
		{name: "an allow keeps its own error", chain: []Named{{"a", fixed(NoOpinion, "", boom)}, {"b", fixed(Allow, "", nil)}},
			want: Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := false
			chain := append(tt.chain, Named{"last", counting{fixed(NoOpinion, "", nil), &asked}})
			if len(tt.chain) == 0 {
				chain = nil
			}
			d, reason, err := Union(chain...).Authorize(context.Background(), attrs)
			if d != tt.want || reason != tt.wantReason {
				t.Errorf("got %v %q, want %v %q", d, reason, tt.want, tt.wantReason)
			}
			if gotErr := errString(err); gotErr != tt.wantErr {
				t.Errorf("err %q, want %q", gotErr, tt.wantErr)
			}
			if len(tt.chain) > 0 && asked != (tt.want == NoOpinion) {
				t.Errorf("later authorizer asked: %v", asked)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestUnionOfOneIsThatOne(t *testing.T) {
	a := allowAll{}
	if got := Union(Named{"only", a}); got != Authorizer(a) {
		t.Errorf("Union of one = %#v, want the authorizer itself", got)
	}
}

func TestUnionRulesFor(t *testing.T) {
	u := Union(Named{"groups", PrivilegedGroups("system:masters")}, Named{"allow", allowAll{}}, Named{"deny", denyAll{}})
	rules, err := u.(RuleResolver).RulesFor(context.Background(), &authn.User{Name: "a"}, "ns")
	if err != nil {
		t.Fatal(err)
	}
	want := []authorizationv1.ResourceRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}
	if len(rules.Resource) != 1 || rules.Resource[0].Verbs[0] != want[0].Verbs[0] || len(rules.NonResource) != 1 || rules.Incomplete {
		t.Errorf("rules = %+v", rules)
	}
}

func TestPrivilegedGroups(t *testing.T) {
	a := PrivilegedGroups("system:masters")
	info := &request.Info{Verb: "get", Path: "/"}
	for _, tt := range []struct {
		user *authn.User
		want Decision
	}{
		{&authn.User{Name: "admin", Groups: []string{"system:masters", "system:authenticated"}}, Allow},
		{&authn.User{Name: "alice", Groups: []string{"devs"}}, NoOpinion},
		{nil, NoOpinion},
	} {
		if d, _, _ := a.Authorize(context.Background(), Attributes{User: tt.user, Info: info}); d != tt.want {
			t.Errorf("%v: got %v, want %v", tt.user, d, tt.want)
		}
	}
}
