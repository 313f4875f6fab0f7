package kubelettest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certs are the test kubelet's CA, its serving certificate and a client
// certificate it trusts, also written as PEM files for the server's flags.
type certs struct {
	pool                          *x509.CertPool
	serving                       tls.Certificate
	caFile, clientCert, clientKey string
}

func newCerts(dir string) (*certs, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-kubelet-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	c := &certs{pool: x509.NewCertPool(), caFile: filepath.Join(dir, "kubelet-ca.crt"),
		clientCert: filepath.Join(dir, "apiserver-kubelet-client.crt"), clientKey: filepath.Join(dir, "apiserver-kubelet-client.key")}
	c.pool.AddCert(ca)
	serving := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test-kubelet"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.ParseIP(NodeIP)}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	certPEM, keyPEM, err := issue(serving, ca, caKey)
	if err != nil {
		return nil, err
	}
	if c.serving, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, err
	}
	client := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if certPEM, keyPEM, err = issue(client, ca, caKey); err != nil {
		return nil, err
	}
	for path, data := range map[string][]byte{c.caFile: pemBlock("CERTIFICATE", caDER), c.clientCert: certPEM, c.clientKey: keyPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// issue signs tmpl with the CA and returns the certificate and its key.
func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
