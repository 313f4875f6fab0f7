package pki

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadClientCAFile(t *testing.T) {
	c := mustEnsure(t, ServingOptions{DataDir: t.TempDir()})
	other := mustEnsure(t, ServingOptions{DataDir: t.TempDir()})
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		path     string
		wantSubj int
		wantErr  string
	}{
		{name: "one CA", path: c.CAFile, wantSubj: 1},
		{name: "bundle of two", path: write("bundle", append(append([]byte{}, c.CAPEM...), other.CAPEM...)), wantSubj: 2},
		{name: "no certificates", path: write("empty", []byte("hello")), wantErr: "reading client CA file"},
		{name: "missing", path: filepath.Join(dir, "nope"), wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, err := LoadClientCAFile(tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(pool.Subjects()); n != tt.wantSubj {
				t.Errorf("pool has %d subjects, want %d", n, tt.wantSubj)
			}
		})
	}
}

func TestClientCABundleReloads(t *testing.T) {
	own := mustEnsure(t, ServingOptions{DataDir: t.TempDir()})
	first := mustEnsure(t, ServingOptions{DataDir: t.TempDir()})
	second := mustEnsure(t, ServingOptions{DataDir: t.TempDir()})
	path := filepath.Join(t.TempDir(), "client-ca.crt")
	write := func(data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(first.CAPEM)
	b, err := NewClientCABundle(path, own.CAPEM)
	if err != nil {
		t.Fatal(err)
	}
	subjects := func() int {
		b.mu.Lock()
		b.checked = time.Time{} // look at the file now
		b.mu.Unlock()
		return len(b.Pool().Subjects())
	}
	if n := subjects(); n != 2 {
		t.Fatalf("pool has %d subjects, want the file's and capstan's", n)
	}
	write(append(append([]byte{}, first.CAPEM...), second.CAPEM...))
	if n := subjects(); n != 3 {
		t.Fatalf("after adding a CA to the file: %d subjects, want 3", n)
	}
	write([]byte("half written"))
	if n := subjects(); n != 3 {
		t.Fatalf("after a broken write: %d subjects, want the last good 3", n)
	}
	if _, err := NewClientCABundle(path, nil); err == nil {
		t.Error("a bundle started from a broken file")
	}
}
