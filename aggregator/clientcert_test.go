package aggregator

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writePair writes a self-signed client certificate for cn.
func writePair(t *testing.T, certFile, keyFile, cn string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func commonName(t *testing.T, c *clientCert) string {
	t.Helper()
	pair, err := c.get(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName
}

// TestClientCertReload: a rotated front-proxy certificate is used from the
// next handshake on; a half-written rotation keeps the last good one; bad
// files at start fail the start.
func TestClientCertReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if _, err := newClientCert(certFile, keyFile); err == nil {
		t.Fatal("missing files accepted")
	}
	writePair(t, certFile, keyFile, "first")
	c, err := newClientCert(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if cn := commonName(t, c); cn != "first" {
		t.Fatalf("CN %q", cn)
	}
	writePair(t, certFile, keyFile, "second")
	if cn := commonName(t, c); cn != "second" {
		t.Errorf("after rotation CN %q, want second", cn)
	}
	if err := os.WriteFile(keyFile, []byte("half written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cn := commonName(t, c); cn != "second" {
		t.Errorf("with a broken key CN %q, want the last good one", cn)
	}
	if err := os.Remove(certFile); err != nil {
		t.Fatal(err)
	}
	if cn := commonName(t, c); cn != "second" {
		t.Errorf("with the certificate gone CN %q, want the last good one", cn)
	}
}
