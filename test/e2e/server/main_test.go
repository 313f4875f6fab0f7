// Package server tests the generic server end to end: flags, serving
// (TLS, HTTP/2), health, flow control, shutdown, encryption at rest and
// several replicas.
package server

import (
	"os"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
