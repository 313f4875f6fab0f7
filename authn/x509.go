package authn

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// NewX509 returns an Authenticator for TLS client certificates. The first
// peer certificate is verified, with the others as intermediates, by the
// options verifyOptions returns (called per request, so the roots may
// change); client-auth key usage is required unless the options name key
// usages. The subject's CommonName becomes the user name and its
// Organizations the groups, as in kube-apiserver.
//
// A request without a client certificate, options without Roots (no client
// CA is configured), and a certificate without a CommonName get no opinion
// (ok=false, nil error), as in kube-apiserver. A certificate that does not
// verify is an error.
func NewX509(verifyOptions func() x509.VerifyOptions) Authenticator {
	cache := newVerifyCache()
	return AuthenticatorFunc(func(r *http.Request) (*Response, bool, error) {
		cert, ok, err := verifiedClientCert(r, verifyOptions, cache)
		if !ok || err != nil {
			return nil, false, err
		}
		return userFromCert(cert)
	})
}

// verifiedClientCert is the request's client certificate, verified with
// verifyOptions (client auth usage unless they say otherwise; the other
// presented certificates as intermediates). No certificate, or options
// without Roots, is no opinion; one that does not verify is an error.
// Verifications that succeeded are remembered in cache (which may be nil).
func verifiedClientCert(r *http.Request, verifyOptions func() x509.VerifyOptions, cache *verifyCache) (*x509.Certificate, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, false, nil
	}
	opts := verifyOptions()
	if opts.Roots == nil {
		return nil, false, nil
	}
	peers := r.TLS.PeerCertificates
	explicitIntermediates := opts.Intermediates != nil
	if len(opts.KeyUsages) == 0 {
		opts.KeyUsages = clientAuthUsage
	}
	key, cacheable := cache.key(peers, opts, explicitIntermediates)
	if cacheable && cache.verified(key, time.Now()) {
		return peers[0], true, nil
	}
	// The presented intermediates are part of the key: the pool is only
	// needed to verify.
	if opts.Intermediates == nil && len(peers) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range peers[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	chains, err := peers[0].Verify(opts)
	if err != nil {
		return nil, false, fmt.Errorf("verifying certificate %s failed: %w", certificateIdentifier(peers[0]), err)
	}
	if cacheable {
		cache.remember(key, chains)
	}
	return peers[0], true, nil
}

var clientAuthUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}

// userFromCert maps a verified certificate to a user.
func userFromCert(c *x509.Certificate) (*Response, bool, error) {
	if c.Subject.CommonName == "" {
		return nil, false, nil
	}
	uid, err := uidFromCert(c)
	if err != nil {
		return nil, false, err
	}
	sum := sha256.Sum256(c.Raw)
	return &Response{User: &User{
		Name:   c.Subject.CommonName,
		UID:    uid,
		Groups: c.Subject.Organization,
		Extra:  map[string][]string{CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(sum[:])}},
	}}, true, nil
}

// uidOID is the LDAP "uid" attribute (RFC 4519), which Kubernetes reads as
// the user's UID when a certificate's subject carries it once.
var uidOID = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}

func uidFromCert(c *x509.Certificate) (string, error) {
	var uids []string
	for _, name := range c.Subject.Names {
		if !name.Type.Equal(uidOID) {
			continue
		}
		uid, ok := name.Value.(string)
		if !ok {
			return "", errors.New("unable to parse UID into a string")
		}
		uids = append(uids, uid)
	}
	switch {
	case len(uids) == 0:
		return "", nil
	case len(uids) > 1:
		return "", fmt.Errorf("expected 1 UID, but found multiple: %v", uids)
	case uids[0] == "":
		return "", errors.New("UID cannot be an empty string")
	}
	return uids[0], nil
}

// certificateIdentifier names a certificate in errors and logs by serial
// number and key identifiers, as kube-apiserver does.
func certificateIdentifier(c *x509.Certificate) string {
	return fmt.Sprintf("SN=%d, SKID=%s, AKID=%s", c.SerialNumber, colonHex(c.SubjectKeyId), colonHex(c.AuthorityKeyId))
}

// colonHex writes bytes as upper-case hex pairs separated by colons.
func colonHex(b []byte) string {
	pairs := make([]string, len(b))
	for i, x := range b {
		pairs[i] = fmt.Sprintf("%02X", x)
	}
	return strings.Join(pairs, ":")
}
