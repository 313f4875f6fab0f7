package kubectl

import (
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestWhoAmIAndImpersonation(t *testing.T) {
	testkit.Kubectl(t)
	s := testkit.StartServer(t)
	mustContain(t, run(t, s, "", "auth", "whoami"), "admin", "system:masters", "system:authenticated")
	mustContain(t, run(t, s, "", "auth", "whoami", "--as=alice", "--as-group=devs"), "alice", "[devs system:authenticated]")
	mustContain(t, run(t, s, "", "auth", "whoami", "--as=system:serviceaccount:team:bot"),
		"system:serviceaccount:team:bot", "system:serviceaccounts:team")
	out, errOut, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "get", "configmaps", "--as-group=devs")
	if err == nil {
		t.Fatalf("impersonating a group without a user succeeded: %s", out)
	}
	mustContain(t, errOut, "without impersonating a user")
}
