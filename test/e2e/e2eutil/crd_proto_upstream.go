package e2eutil

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-io/capstan/internal/testkit"
)

// UpstreamEnv names the directory of the kube-apiserver and etcd binaries
// bench/upstream builds; without it TestKubeRoundTrip is skipped.
const UpstreamEnv = "CAPSTAN_UPSTREAM_BIN"

// Upstream is one bench/upstream/run.sh start: its env file's values.
type Upstream map[string]string

// StartUpstream runs bench/upstream/run.sh with env and reads its env file.
func StartUpstream(t *testing.T, env ...string) Upstream {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "bench/upstream/run.sh"))
	cmd.Env = append(os.Environ(), append([]string{"OUT=" + out, "BUILD=0", "AUTHZ=AlwaysAllow", "READY_TIMEOUT=120"}, env...)...)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run.sh: %v\n%s", err, output)
	}
	f, err := os.Open(filepath.Join(out, "env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := Upstream{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		u[k] = v
	}
	t.Cleanup(func() { u.Stop(t, "") })
	return u
}

// Stop ends the kube-apiserver of u, and its etcd unless only is
// "kube-apiserver". Stopping twice is harmless.
func (u Upstream) Stop(t *testing.T, only string) {
	t.Helper()
	root, _ := testkit.RepoRoot()
	if only == "kube-apiserver" {
		if pid := u["APISERVER_PID"]; pid != "" {
			if err := exec.Command("kill", pid).Run(); err == nil {
				waitGone(t, pid)
			}
		}
		return
	}
	if _, err := os.Stat(filepath.Join(u["OUT"], "pids")); err == nil {
		if out, err := exec.Command(filepath.Join(root, "bench/upstream/stop.sh"), u["OUT"]).CombinedOutput(); err != nil {
			t.Errorf("stop.sh: %v\n%s", err, out)
		}
	}
}

// waitGone waits until the process pid has ended.
func waitGone(t *testing.T, pid string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command("kill", "-0", pid).Run() != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("process %s did not end", pid)
}

func (u Upstream) Config(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", u["KUBECONFIG"])
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
