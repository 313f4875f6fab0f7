// Package aggregator tests the aggregator end to end: APIServices, their
// availability, the proxy to extension servers (sample-apiserver among
// them) and its faults.
package aggregator

import (
	"os"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
