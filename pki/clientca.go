package pki

import (
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

// LoadClientCAFile reads a PEM bundle of CA certificates (--client-ca-file)
// into a pool. A file without certificates is an error.
func LoadClientCAFile(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading client CA file: %w", err)
	}
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return nil, fmt.Errorf("reading client CA file %s: %w", path, err)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// ClientCABundle is the pool of CAs that client certificates are verified
// against: --client-ca-file, read again when the file changes, plus fixed
// CAs (capstan's own). A changed file that does not parse leaves the last
// good pool in use, as kube-apiserver keeps its last good bundle.
type ClientCABundle struct {
	path  string
	fixed []byte // PEM

	mu      sync.Mutex // guards the fields below
	checked time.Time
	stamp   fileStamp
	pool    *x509.CertPool
}

// statEvery bounds how often the file is looked at: the bundle is read on
// every request that carries a client certificate.
const statEvery = time.Second

// NewClientCABundle reads path (if not empty) and adds fixedPEM.
func NewClientCABundle(path string, fixedPEM []byte) (*ClientCABundle, error) {
	b := &ClientCABundle{path: path, fixed: fixedPEM}
	pool, err := b.load()
	if err != nil {
		return nil, err
	}
	b.pool, b.stamp, b.checked = pool, statFile(path), time.Now()
	return b, nil
}

// Pool returns the current pool.
func (b *ClientCABundle) Pool() *x509.CertPool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.path == "" || time.Since(b.checked) < statEvery {
		return b.pool
	}
	b.checked = time.Now()
	if stamp := statFile(b.path); stamp != b.stamp {
		if pool, err := b.load(); err == nil {
			b.pool, b.stamp = pool, stamp
		}
	}
	return b.pool
}

func (b *ClientCABundle) load() (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if b.path != "" {
		p, err := LoadClientCAFile(b.path)
		if err != nil {
			return nil, err
		}
		pool = p
	}
	if len(b.fixed) > 0 {
		pool.AppendCertsFromPEM(b.fixed)
	}
	return pool, nil
}
