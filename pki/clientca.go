package pki

import (
	"crypto/x509"
	"fmt"
	"os"

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
