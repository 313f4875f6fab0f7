package envtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/capstan-io/capstan/internal/testkit"
)

// suiteSubset are controller-runtime packages whose envtest-based tests
// run quickly and cover the client, cache, owner references and
// CreateOrUpdate; hack/envtest-suite.sh with no arguments runs them all.
var suiteSubset = []string{"pkg/cluster", "pkg/controller/controllerutil"}

// TestControllerRuntimeSuite runs a subset of controller-runtime's own
// envtest-based test packages (from the module cache, at the version
// go.mod requires) with capstan as KUBEBUILDER_ASSETS' kube-apiserver and
// etcd. It builds those packages, so -short skips it.
func TestControllerRuntimeSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs controller-runtime's tests")
	}
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "hack", "envtest-suite.sh"), suiteSubset...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "WORK="+t.TempDir())
	out, err := cmd.CombinedOutput()
	t.Logf("hack/envtest-suite.sh %v:\n%s", suiteSubset, out)
	if err != nil {
		t.Fatalf("controller-runtime's tests failed against capstan: %v", err)
	}
}
