package aggregator

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"sync"
)

// clientCert is the front-proxy client certificate
// (--proxy-client-cert-file, --proxy-client-key-file) presented to
// extension servers. The files are read again when their content changes,
// checked at each TLS handshake, so that a rotated certificate is used
// without a restart.
type clientCert struct {
	certFile, keyFile string

	mu      sync.Mutex // guards the fields below
	certPEM []byte
	keyPEM  []byte
	loaded  *tls.Certificate
}

func newClientCert(certFile, keyFile string) (*clientCert, error) {
	c := &clientCert{certFile: certFile, keyFile: keyFile}
	if _, err := c.current(); err != nil {
		return nil, err
	}
	return c, nil
}

// current is the certificate in the files now, or the last good one when
// they cannot be read or parsed (a rotation half written).
func (c *clientCert) current() (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(c.certFile)
	if err != nil {
		return c.keep(fmt.Errorf("--proxy-client-cert-file: %w", err))
	}
	keyPEM, err := os.ReadFile(c.keyFile)
	if err != nil {
		return c.keep(fmt.Errorf("--proxy-client-key-file: %w", err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded != nil && bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM) {
		return c.loaded, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if c.loaded != nil {
			return c.loaded, nil
		}
		return nil, fmt.Errorf("--proxy-client-cert-file, --proxy-client-key-file: %w", err)
	}
	c.certPEM, c.keyPEM, c.loaded = certPEM, keyPEM, &pair
	return c.loaded, nil
}

func (c *clientCert) keep(err error) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded != nil {
		return c.loaded, nil
	}
	return nil, err
}

// get is a tls.Config GetClientCertificate.
func (c *clientCert) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if c == nil {
		return &tls.Certificate{}, nil
	}
	return c.current()
}
