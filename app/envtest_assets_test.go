package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteEnvtestAssets: kube-apiserver and etcd run this binary (links,
// or copies with --copy), kubectl is a copy of the one given, and writing
// again over an existing directory replaces what is there.
func TestWriteEnvtestAssets(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self, _ = filepath.EvalSymlinks(self)
	kubectl := filepath.Join(t.TempDir(), "kubectl")
	if err := os.WriteFile(kubectl, []byte("#!/bin/sh\necho kubectl\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "assets")
	for _, copyBinary := range []bool{false, true} {
		var out bytes.Buffer
		if err := WriteEnvtestAssets(dir, kubectl, copyBinary, &out); err != nil {
			t.Fatalf("copy=%v: %v", copyBinary, err)
		}
		if !strings.Contains(out.String(), "KUBEBUILDER_ASSETS="+dir) {
			t.Errorf("copy=%v: printed %q", copyBinary, out.String())
		}
		for _, name := range []string{"kube-apiserver", "etcd"} {
			p := filepath.Join(dir, name)
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			if isLink := fi.Mode()&os.ModeSymlink != 0; isLink == copyBinary {
				t.Errorf("copy=%v: %s is a link: %v", copyBinary, name, isLink)
			}
			if !copyBinary {
				if target, _ := os.Readlink(p); target != self {
					t.Errorf("%s links to %s, want %s", name, target, self)
				}
			} else if fi.Size() == 0 || fi.Mode()&0o111 == 0 {
				t.Errorf("copied %s: size %d mode %v", name, fi.Size(), fi.Mode())
			}
		}
		got, err := os.ReadFile(filepath.Join(dir, "kubectl"))
		if err != nil || !strings.Contains(string(got), "echo kubectl") {
			t.Errorf("kubectl: %q %v", got, err)
		}
	}
	if err := WriteEnvtestAssets(dir, filepath.Join(t.TempDir(), "none"), false, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--kubectl") {
		t.Errorf("a missing --kubectl: %v", err)
	}
}
