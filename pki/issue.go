package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"

	"k8s.io/client-go/util/keyutil"
)

const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 365 * 24 * time.Hour
	// renewBefore is how long before expiry a generated certificate is
	// replaced at start-up.
	renewBefore = 30 * 24 * time.Hour
	// backdate makes new certificates valid a little in the past, so that a
	// peer whose clock is behind ours accepts them (kube uses one hour).
	backdate = time.Hour
)

// leafSpec is what distinguishes one issued certificate from another.
type leafSpec struct {
	subject pkix.Name
	usage   x509.ExtKeyUsage
	dns     []string
	ips     []net.IP
}

// newCA creates a self-signed CA with a fresh ECDSA P-256 key.
func newCA(now time.Time) (*keyPair, error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("capstan-ca@%d", now.Unix())},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return sign(tmpl, tmpl, key, key, keyPEM, nil)
}

// issue creates a certificate for spec with a fresh key, signed by ca. The
// stored certificate file holds the leaf followed by the CA, as kube-apiserver
// writes its self-signed serving certificate.
func issue(ca *keyPair, spec leafSpec, now time.Time) (*keyPair, error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               spec.subject,
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(leafValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{spec.usage},
		BasicConstraintsValid: true,
		DNSNames:              spec.dns,
		IPAddresses:           spec.ips,
	}
	return sign(tmpl, ca.cert, key, ca.key, keyPEM, encodeCert(ca.cert.Raw))
}

func sign(tmpl, parent *x509.Certificate, key, parentKey crypto.Signer, keyPEM, chain []byte) (*keyPair, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(1))
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("creating certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	certPEM := append(encodeCert(der), chain...)
	return &keyPair{cert: cert, certPEM: certPEM, key: key, keyPEM: keyPEM}, nil
}

func newKey() (crypto.Signer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return key, keyPEM, nil
}

// signedBy reports whether cert carries a valid signature of ca.
func signedBy(cert *x509.Certificate, ca *keyPair) bool {
	return ca != nil && cert.CheckSignatureFrom(ca.cert) == nil
}

// expiresSoon reports whether cert is no longer, or not yet, valid at now,
// or stops being valid within renewBefore.
func expiresSoon(cert *x509.Certificate, now time.Time) bool {
	return now.Before(cert.NotBefore) || now.Add(renewBefore).After(cert.NotAfter)
}
