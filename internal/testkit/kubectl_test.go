package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "kubectl", "main.go")); err != nil {
		t.Errorf("root %s has no hack/kubectl: %v", root, err)
	}
}

func TestKubectlLDFlags(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "v0.37.2", want: "-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean"},
		{in: "v0.38.0-rc.1", want: "gitVersion=v1.38.0-rc.1"},
		{in: "v1.2.3", wantErr: "unexpected"},
		{in: "v0.", wantErr: "unexpected"},
	}
	for _, tt := range tests {
		got, err := KubectlLDFlags(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !strings.Contains(got, tt.want) {
			t.Errorf("%s: = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestRequiredVersion(t *testing.T) {
	goMod := []byte("module x\n\nrequire k8s.io/api v0.1.0\n\nrequire (\n\tk8s.io/kubectl v0.37.2 // indirect\n\tk8s.io/kubectl-foo v9\n)\n")
	for mod, want := range map[string]string{"k8s.io/kubectl": "v0.37.2", "k8s.io/api": "v0.1.0"} {
		if got, err := requiredVersion(goMod, mod); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", mod, got, err, want)
		}
	}
	if _, err := requiredVersion(goMod, "k8s.io/none"); err == nil {
		t.Error("want an error for a module not required")
	}
}

// TestBuildLockedBuildsOnce races builders the way parallel test processes
// do: each takes the lock through its own open file, so flock makes them wait.
func TestBuildLockedBuildsOnce(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kubectl-abc")
	var builds atomic.Int32
	build := func(out string) error {
		builds.Add(1)
		time.Sleep(50 * time.Millisecond)
		return os.WriteFile(out, []byte("#!/bin/sh\n"), 0o755)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if err := buildLocked(bin, build); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("built %d times, want 1", n)
	}
	if leftovers, _ := filepath.Glob(bin + ".tmp*"); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestPruneKubectls(t *testing.T) {
	dir := t.TempDir()
	old, fresh, keep := filepath.Join(dir, "kubectl-old"), filepath.Join(dir, "kubectl-fresh"), filepath.Join(dir, "kubectl-keep")
	for _, p := range []string{old, old + ".lock", fresh, keep} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-48 * time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(keep, long, long)
	pruneKubectls(dir, keep)
	for p, want := range map[string]bool{old: false, old + ".lock": false, fresh: true, keep: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

// TestKubectlVersion builds (or reuses) the real kubectl and runs it.
func TestKubectlVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kubectl")
	}
	stdout, stderr, err := RunKubectl(t, "", nil, "version", "--client")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	root, _ := RepoRoot()
	goMod, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	v, err := requiredVersion(goMod, "k8s.io/kubectl")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Client Version: v1." + strings.TrimPrefix(v, "v0."); !strings.Contains(stdout, want) {
		t.Errorf("kubectl version --client printed %q", stdout)
	}
}
