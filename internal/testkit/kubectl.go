package testkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// KubectlEnv names a kubectl binary to use instead of building one.
const KubectlEnv = "CAPSTAN_KUBECTL"

// KubectlTimeout bounds one RunKubectl call.
var KubectlTimeout = 2 * time.Minute

var kubectl struct {
	once sync.Once
	path string
	err  error
}

// Kubectl returns the path of a kubectl built from ./hack/kubectl at the
// k8s.io/kubectl version go.mod pins (or $CAPSTAN_KUBECTL when set). It is
// built once per machine and go.sum into
// <user cache dir>/capstan/kubectl-<hash>, under a file lock so that test
// packages running in parallel build it only once.
func Kubectl(t testing.TB) string {
	t.Helper()
	kubectl.once.Do(func() {
		if p := os.Getenv(KubectlEnv); p != "" {
			kubectl.path = p
			return
		}
		kubectl.path, kubectl.err = ensureKubectl()
	})
	if kubectl.err != nil {
		t.Fatalf("kubectl: %v", kubectl.err)
	}
	return kubectl.path
}

// RunKubectl runs kubectl with args against kubeconfig (none if empty),
// feeding it stdin (may be nil), and returns what it printed. err is non-nil
// when kubectl exits non-zero or runs longer than KubectlTimeout. kubectl's
// discovery cache and the user's kuberc are kept out of the way.
func RunKubectl(t testing.TB, kubeconfig string, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	bin := Kubectl(t)
	if kubeconfig != "" {
		args = append([]string{"--kubeconfig", kubeconfig}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), KubectlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBERC=off", "KUBECACHEDIR="+t.TempDir())
	cmd.Stdin = stdin
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("kubectl %s: timed out after %v: %w", strings.Join(args, " "), KubectlTimeout, err)
	} else if err != nil {
		err = fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), err
}

// ensureKubectl returns the cached binary for this go.sum, building it if
// needed.
func ensureKubectl() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	key, err := kubectlKey(root)
	if err != nil {
		return "", err
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "capstan")
	bin := filepath.Join(dir, "kubectl-"+key)
	err = buildLocked(bin, func(out string) error { return buildKubectl(root, out) })
	if err != nil {
		return "", err
	}
	pruneKubectls(dir, bin)
	return bin, nil
}

// kubectlKey hashes what decides the binary: go.sum and the main package.
func kubectlKey(root string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"go.sum", filepath.Join("hack", "kubectl", "main.go")} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return "", err
		}
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildLocked makes sure bin exists: under an exclusive lock on bin+".lock"
// it calls build with a temporary path next to bin, then renames that into
// place, unless bin is already there.
func buildLocked(bin string, build func(out string) error) error {
	if _, err := os.Stat(bin); err == nil {
		return touch(bin)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(bin + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return touch(bin) // built by someone else while we waited
	}
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	defer os.Remove(tmp)
	if err := build(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, bin)
}

// touch marks bin as in use, so that pruneKubectls keeps it.
func touch(bin string) error {
	now := time.Now()
	return os.Chtimes(bin, now, now)
}

// pruneKubectls removes binaries built for other go.sums that nobody has
// used for a day; each is about 100 MB.
func pruneKubectls(dir, keep string) {
	old, _ := filepath.Glob(filepath.Join(dir, "kubectl-*"))
	for _, p := range old {
		fi, err := os.Stat(p)
		if p == keep || strings.HasSuffix(p, ".lock") || err != nil || time.Since(fi.ModTime()) < 24*time.Hour {
			continue
		}
		_ = os.Remove(p)
		_ = os.Remove(p + ".lock")
	}
}

// buildKubectl runs go build for ./hack/kubectl, stamping the version that
// `kubectl version --client` reports (v1.X.Y for k8s.io/kubectl v0.X.Y).
func buildKubectl(root, out string) error {
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	v, err := requiredVersion(goMod, "k8s.io/kubectl")
	if err != nil {
		return err
	}
	ldflags, err := KubectlLDFlags(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("building kubectl: %w", err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-mod=mod", "-ldflags", ldflags, "-o", out, "./hack/kubectl")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./hack/kubectl: %w\n%s", err, msg)
	}
	return nil
}

// KubectlLDFlags returns the -ldflags that stamp the kubectl version for
// k8s.io/kubectl at moduleVersion (v0.37.2 gives v1.37.2):
//
//	-X k8s.io/component-base/version.gitVersion=v1.37.2
//	-X k8s.io/component-base/version.gitMajor=1
//	-X k8s.io/component-base/version.gitMinor=37
//	-X k8s.io/component-base/version.gitTreeState=clean
func KubectlLDFlags(moduleVersion string) (string, error) {
	rest, ok := strings.CutPrefix(moduleVersion, "v0.")
	minor, _, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || minor == "" {
		return "", fmt.Errorf("testkit: unexpected k8s.io/kubectl version %q", moduleVersion)
	}
	const pkg = "k8s.io/component-base/version."
	return strings.Join([]string{
		"-X", pkg + "gitVersion=v1." + rest,
		"-X", pkg + "gitMajor=1",
		"-X", pkg + "gitMinor=" + minor,
		"-X", pkg + "gitTreeState=clean",
	}, " "), nil
}
