package pki

import (
	"os"
	"testing"
)

func TestCertificateReloadsChangedFiles(t *testing.T) {
	dir := t.TempDir()
	c := mustEnsure(t, ServingOptions{CertDir: dir, DataDir: t.TempDir()})
	first, err := c.Certificate()
	if err != nil {
		t.Fatal(err)
	}

	// A half-written rotation (new key, old certificate) keeps the old one.
	otherCert, otherKey := foreignPair(t, t.TempDir())
	copyFile(t, otherKey, c.KeyFile)
	if got, err := c.Certificate(); err != nil || got != first {
		t.Fatalf("after replacing only the key: %v, %v; want the first certificate", got, err)
	}

	copyFile(t, otherCert, c.CertFile)
	got, err := c.Certificate()
	if err != nil {
		t.Fatal(err)
	}
	if got.Leaf.SerialNumber.Cmp(first.Leaf.SerialNumber) == 0 {
		t.Fatal("certificate not reloaded after both files changed")
	}
	if again, _ := c.GetCertificate(nil); again != got {
		t.Error("unchanged files should give the same certificate")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
