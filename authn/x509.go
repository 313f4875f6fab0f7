package authn

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/capstan-io/capstan/metrics"
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
//
// Verifications are remembered (verifyCache), and so is each connection's
// user (certUsers): both only for the same roots and usages and until
// the chain's first expiry, checked on every request.
func NewX509(verifyOptions func() x509.VerifyOptions) Authenticator {
	cache := newVerifyCache()
	users := newCertUsers()
	return AuthenticatorFunc(func(r *http.Request) (*Response, bool, error) {
		peers, opts, ok := clientCertOptions(r, verifyOptions)
		if !ok {
			return nil, false, nil
		}
		now := time.Now()
		metrics.ClientCertificateExpiration(peers[0].NotAfter.Sub(now))
		if resp, ok := users.lookup(peers, opts, now); ok {
			return resp, true, nil
		}
		until, err := verifyPeers(peers, opts, cache)
		if err != nil {
			return nil, false, err
		}
		resp, ok, err := userFromCert(peers[0])
		if ok && err == nil {
			users.remember(peers, opts, until, resp)
		}
		return resp, ok, err
	})
}

// verifiedClientCert is the request's client certificate, verified with
// verifyOptions (client auth usage unless they say otherwise; the other
// presented certificates as intermediates). No certificate, or options
// without Roots, is no opinion; one that does not verify is an error.
// Verifications that succeeded are remembered in cache (which may be nil).
func verifiedClientCert(r *http.Request, verifyOptions func() x509.VerifyOptions, cache *verifyCache) (*x509.Certificate, bool, error) {
	peers, opts, ok := clientCertOptions(r, verifyOptions)
	if !ok {
		return nil, false, nil
	}
	if _, err := verifyPeers(peers, opts, cache); err != nil {
		return nil, false, err
	}
	return peers[0], true, nil
}

// clientCertOptions is the request's presented certificates and the
// options to verify them with; ok is false when there is nothing to
// verify: no certificate, or options without Roots (no client CA).
func clientCertOptions(r *http.Request, verifyOptions func() x509.VerifyOptions) ([]*x509.Certificate, x509.VerifyOptions, bool) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, x509.VerifyOptions{}, false
	}
	opts := verifyOptions()
	if opts.Roots == nil {
		return nil, x509.VerifyOptions{}, false
	}
	return r.TLS.PeerCertificates, opts, true
}

// verifyPeers verifies peers[0], with the others as intermediates unless
// opts name some, for client auth unless opts name other usages, and
// returns until when the verification holds. Verifications that
// succeeded are remembered in cache (which may be nil).
func verifyPeers(peers []*x509.Certificate, opts x509.VerifyOptions, cache *verifyCache) (time.Time, error) {
	explicitIntermediates := opts.Intermediates != nil
	if len(opts.KeyUsages) == 0 {
		opts.KeyUsages = clientAuthUsage
	}
	key, cacheable := cache.key(peers, opts, explicitIntermediates)
	if cacheable {
		if until, err, ok := cache.verified(key, time.Now()); ok {
			return until, err
		}
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
		err = fmt.Errorf("verifying certificate %s failed: %w", certificateIdentifier(peers[0]), err)
		if cacheable {
			cache.rememberFailure(key, err, time.Now())
		}
		return time.Time{}, err
	}
	if cacheable {
		cache.remember(key, chains)
	}
	return chainExpiry(chains), nil
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
