// Package admission tests admission webhooks and admission policies
// (validating and mutating, their bindings, parameters, match conditions
// and type checking) end to end.
package admission

import (
	"os"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }
