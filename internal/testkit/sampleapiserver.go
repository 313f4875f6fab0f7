package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// SampleAPIServerEnv names a sample-apiserver binary to use instead of
// building one.
const SampleAPIServerEnv = "CAPSTAN_SAMPLE_APISERVER"

var sampleAPIServer struct {
	once sync.Once
	path string
	err  error
}

// SampleAPIServer returns the path of k8s.io/sample-apiserver (the
// wardle.example.com extension server) at the version of k8s.io/apiserver
// that go.mod pins, or $CAPSTAN_SAMPLE_APISERVER when set. It is built once
// per machine and version into <user cache dir>/capstan, in a module of its
// own (capstan does not import the server packages it is made of), from the
// Go module proxy like any dependency.
func SampleAPIServer(t testing.TB) string {
	t.Helper()
	sampleAPIServer.once.Do(func() {
		if p := os.Getenv(SampleAPIServerEnv); p != "" {
			sampleAPIServer.path = p
			return
		}
		sampleAPIServer.path, sampleAPIServer.err = ensureSampleAPIServer()
	})
	if sampleAPIServer.err != nil {
		t.Fatalf("sample-apiserver: %v", sampleAPIServer.err)
	}
	return sampleAPIServer.path
}

func ensureSampleAPIServer() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	v, err := requiredVersion(goMod, "k8s.io/apiserver")
	if err != nil {
		return "", err
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	bin := filepath.Join(dir, "capstan", "sample-apiserver-"+v)
	return bin, buildLocked(bin, func(out string) error { return buildSampleAPIServer(v, out) })
}

// buildSampleAPIServer builds k8s.io/sample-apiserver@version into out
// from a throwaway module.
func buildSampleAPIServer(version, out string) error {
	mod, err := os.MkdirTemp("", "capstan-sample-apiserver")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mod)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module capstan.test/sampleapiserver\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	for _, args := range [][]string{
		{"get", "k8s.io/sample-apiserver@" + version},
		{"build", "-o", abs, "k8s.io/sample-apiserver"},
	} {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %v: %w\n%s", args, err, msg)
		}
	}
	return nil
}
