// Package ha runs capstan as several replicas on an etcd cluster: three
// capstan processes (this test binary, run again as capstan) on three
// etcd members over mutual TLS, behind a TCP load balancer written here.
// Replicas and an etcd member are killed and the replicas restarted one by
// one while clients write; no acknowledged write may be lost and the
// elected loops may never run on two replicas at once.
package ha

import (
	"os"
	"testing"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/internal/testkit"
)

// replicaEnv, when set, makes the test binary run capstan with its
// arguments instead of the tests: the replicas are processes that a
// SIGKILL ends as it ends a real server, built with the test.
const replicaEnv = "CAPSTAN_HA_REPLICA"

func TestMain(m *testing.M) {
	if os.Getenv(replicaEnv) != "" {
		cmd := app.NewCommand(os.Stderr)
		cmd.SetArgs(os.Args[1:])
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testkit.Main(m))
}
