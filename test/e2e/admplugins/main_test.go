// Package admplugins tests kube's built-in admission plugins end to end:
// quota, limits, pod plugins, pod security, service accounts, storage
// protection and the plugins' flags and configuration files.
package admplugins

import (
	"os"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
