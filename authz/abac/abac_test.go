package abac

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

func res(verb, group, ns, resource string) *request.Info {
	return &request.Info{IsResourceRequest: true, Verb: verb, APIGroup: group, Namespace: ns, Resource: resource}
}

func nonRes(verb, path string) *request.Info { return &request.Info{Verb: verb, Path: path} }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Spec
		err  string
	}{
		{line: `{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"ns","resource":"pods","apiGroup":"","readonly":true}}`,
			want: Spec{User: "alice", Namespace: "ns", Resource: "pods", Readonly: true}},
		{line: `{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"*","nonResourcePath":"*"}}`,
			want: Spec{Group: "system:authenticated", NonResourcePath: "*"}},
		// v0: no subject is every authenticated user; no namespace nor
		// resource is everything, paths included, in every API group.
		{line: `{}`, want: Spec{Group: "system:authenticated", Namespace: "*", Resource: "*", APIGroup: "*", NonResourcePath: "*"}},
		{line: `{"user":"bob","resource":"pods"}`, want: Spec{User: "bob", Namespace: "*", Resource: "pods", APIGroup: "*"}},
		{line: `{"group":"*","namespace":"ns"}`, want: Spec{Group: "system:authenticated", Namespace: "ns", Resource: "*", APIGroup: "*"}},
		{line: `{"apiVersion":"abac.authorization.kubernetes.io/v0","kind":"Policy","user":"bob","readonly":true}`,
			want: Spec{User: "bob", Readonly: true, Namespace: "*", Resource: "*", APIGroup: "*", NonResourcePath: "*"}},
		{line: `{"apiVersion":"abac.authorization.kubernetes.io/v2","kind":"Policy","spec":{}}`, err: `no kind "Policy" is registered for version "abac.authorization.kubernetes.io/v2"`},
		{line: `{"user":`, err: "unexpected end of JSON input"},
	} {
		got, err := parse([]byte(tc.line))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s:\ngot  %+v %v\nwant %+v", tc.line, got, err, tc.want)
		}
	}
}

func TestMatches(t *testing.T) {
	alice := &authn.User{Name: "alice", Groups: []string{"dev", "system:authenticated"}}
	for _, tc := range []struct {
		name string
		p    Spec
		u    *authn.User
		info *request.Info
		want bool
	}{
		{"user and resource", Spec{User: "alice", Namespace: "*", Resource: "pods", APIGroup: ""}, alice, res("delete", "", "ns", "pods"), true},
		{"other user", Spec{User: "bob", Namespace: "*", Resource: "*", APIGroup: "*"}, alice, res("get", "", "ns", "pods"), false},
		{"group", Spec{Group: "dev", Namespace: "*", Resource: "*", APIGroup: "*"}, alice, res("get", "", "ns", "pods"), true},
		{"user and group both needed", Spec{User: "alice", Group: "ops", Namespace: "*", Resource: "*", APIGroup: "*"}, alice, res("get", "", "ns", "pods"), false},
		{"no subject matches no one", Spec{Namespace: "*", Resource: "*", APIGroup: "*"}, alice, res("get", "", "ns", "pods"), false},
		{"wildcard user", Spec{User: "*", Namespace: "*", Resource: "*", APIGroup: "*"}, alice, res("get", "", "ns", "pods"), true},
		{"no user on request", Spec{User: "*", Namespace: "*", Resource: "*", APIGroup: "*"}, nil, res("get", "", "ns", "pods"), false},
		{"readonly get", Spec{User: "alice", Readonly: true, Namespace: "*", Resource: "*", APIGroup: "*"}, alice, res("watch", "", "ns", "pods"), true},
		{"readonly create", Spec{User: "alice", Readonly: true, Namespace: "*", Resource: "*", APIGroup: "*"}, alice, res("create", "", "ns", "pods"), false},
		{"namespace", Spec{User: "alice", Namespace: "ns", Resource: "*", APIGroup: "*"}, alice, res("get", "", "other", "pods"), false},
		{"namespace is exact, not a prefix", Spec{User: "alice", Namespace: "n*", Resource: "*", APIGroup: "*"}, alice, res("get", "", "ns", "pods"), false},
		{"cluster scope needs * namespace", Spec{User: "alice", Namespace: "ns", Resource: "*", APIGroup: "*"}, alice, res("get", "", "", "nodes"), false},
		{"api group", Spec{User: "alice", Namespace: "*", Resource: "*", APIGroup: "apps"}, alice, res("get", "", "ns", "pods"), false},
		{"empty api group is the core group", Spec{User: "alice", Namespace: "*", Resource: "deployments"}, alice, res("get", "apps", "ns", "deployments"), false},
		{"resource rule does not cover paths", Spec{User: "alice", Namespace: "*", Resource: "*", APIGroup: "*"}, alice, nonRes("get", "/healthz"), false},
		{"path", Spec{User: "alice", NonResourcePath: "/healthz"}, alice, nonRes("get", "/healthz"), true},
		{"path prefix", Spec{User: "alice", NonResourcePath: "/logs/*"}, alice, nonRes("get", "/logs/a/b"), true},
		{"path prefix without star", Spec{User: "alice", NonResourcePath: "/logs"}, alice, nonRes("get", "/logs/a"), false},
		{"path star", Spec{User: "alice", NonResourcePath: "*"}, alice, nonRes("post", "/anything"), true},
		{"readonly path post", Spec{User: "alice", Readonly: true, NonResourcePath: "*"}, alice, nonRes("post", "/anything"), false},
		{"path rule does not cover resources", Spec{User: "alice", NonResourcePath: "*"}, alice, res("get", "", "ns", "pods"), false},
	} {
		if got := matches(&tc.p, tc.u, tc.info); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte("# a comment\n\n"+`{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"*","resource":"*","apiGroup":"*"}}`+"\n"), 0o600)
	a, err := NewFromFile(good)
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := a.Authorize(context.Background(), authz.Attributes{User: &authn.User{Name: "alice"}, Info: res("get", "", "ns", "pods")})
	if d != authz.Allow {
		t.Errorf("alice: %v", d)
	}
	d, reason, _ := a.Authorize(context.Background(), authz.Attributes{User: &authn.User{Name: "bob"}, Info: res("get", "", "ns", "pods")})
	if d != authz.NoOpinion || reason != "No policy matched." {
		t.Errorf("bob: %v %q", d, reason)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{}\n{bad\n"), 0o600)
	_, err = NewFromFile(bad)
	if want := "error reading policy file " + bad + ", line 2: {bad: invalid character"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("bad file: %v, want %q", err, want)
	}
}
