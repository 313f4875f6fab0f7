package abac

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// FuzzLoad: any --authorization-policy-file is refused with an error
// naming its line, or authorizes requests without a panic.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"user":"alice","namespace":"*","resource":"*","apiGroup":"*"}}` + "\n",
		`{"user":"bob","readonly":true,"resource":"pods"}` + "\n# comment\n\n",
		`{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"system:authenticated","nonResourcePath":"/api*","readonly":true}}` + "\n",
		`{"apiVersion":"v2","kind":"Policy","spec":{}}` + "\n",
		"{not json\n",
	} {
		f.Add([]byte(seed))
	}
	alice := &authn.User{Name: "alice", Groups: []string{"system:authenticated"}}
	attrs := []authz.Attributes{
		{User: alice, Info: &request.Info{Verb: "get", IsResourceRequest: true, Namespace: "ns", Resource: "pods", Name: "p"}},
		{User: alice, Info: &request.Info{Verb: "create", IsResourceRequest: true, APIGroup: "apps", Resource: "deployments"}},
		{User: alice, Info: &request.Info{Verb: "get", Path: "/api/v1"}},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "policy.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := NewFromFile(path)
		if err != nil {
			return
		}
		for _, at := range attrs {
			_, _, _ = a.Authorize(context.Background(), at)
		}
	})
}
