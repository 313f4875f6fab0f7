// Package e2e tests capstan end to end with client-go: the API's
// semantics (CRUD, lists, watches, selectors, media types, tables, field
// validation, managed fields, garbage collection, discovery, OpenAPI) on
// a fresh in-process server per test. The other subjects have packages of
// their own under test/e2e, which go test runs in parallel; their shared
// helpers are in test/e2e/e2eutil.
package e2e

import (
	"os"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
