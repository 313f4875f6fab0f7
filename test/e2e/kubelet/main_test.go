// Package kubelet tests what reaches a kubelet end to end through a test
// kubelet: logs, exec, attach, port forwarding, the node, pod and service
// proxies, and admission of those connect requests.
package kubelet

import (
	"os"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
