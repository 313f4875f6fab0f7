package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"testing"
)

func TestOpenAPI(t *testing.T) {
	e := e2eutil.Start(t)
	t.Run("v2", e.CheckOpenAPIV2)
	t.Run("v3", e.CheckOpenAPIV3)
	t.Run("kubectl", e.CheckOpenAPIKubectl)
}
