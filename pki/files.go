package pki

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// keyPair is a certificate (and the chain that was stored with it) with its
// private key, as read from or written to a .crt/.key pair of files.
type keyPair struct {
	cert    *x509.Certificate // the leaf
	certPEM []byte            // leaf first, then any chain
	key     crypto.Signer
	keyPEM  []byte
}

// pairExists reports whether both files of a pair exist. One without the
// other is an error, as in kube-apiserver.
func pairExists(certFile, keyFile string) (bool, error) {
	certOK, keyOK := fileExists(certFile), fileExists(keyFile)
	switch {
	case !certOK && !keyOK:
		return false, nil
	case !certOK:
		return false, fmt.Errorf("error reading %s, certificate and key must be supplied as a pair", certFile)
	case !keyOK:
		return false, fmt.Errorf("error reading %s, certificate and key must be supplied as a pair", keyFile)
	}
	return true, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// readPair reads and parses a certificate/key pair.
func readPair(certFile, keyFile string) (*keyPair, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", keyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("parsing %s: unsupported private key type %T", keyFile, key)
	}
	return &keyPair{cert: certs[0], certPEM: certPEM, key: signer, keyPEM: keyPEM}, nil
}

// readPairIfExists is readPair that returns nil, nil when neither file exists.
func readPairIfExists(certFile, keyFile string) (*keyPair, error) {
	ok, err := pairExists(certFile, keyFile)
	if err != nil || !ok {
		return nil, err
	}
	return readPair(certFile, keyFile)
}

// writePair writes the key (0600) and then the certificate (0644), each
// atomically, creating the directory (0700) if needed.
func writePair(p *keyPair, certFile, keyFile string) error {
	if err := writeFileAtomic(keyFile, p.keyPEM, 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certFile, p.certPEM, 0o644)
}

// writeFileAtomic writes data to a temporary file in the same directory and
// renames it into place, so that readers never see a partial file.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return errors.Join(err, f.Close())
	}
	if _, err := f.Write(data); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der})
}

func parseFirstCert(data []byte) (*x509.Certificate, error) {
	certs, err := certutil.ParseCertsPEM(data)
	if err != nil {
		return nil, err
	}
	return certs[0], nil
}
