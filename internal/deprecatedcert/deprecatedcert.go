// Package deprecatedcert notices backends (webhooks, extension API
// servers) whose serving certificates kube deprecates: one with no
// subjectAltName, whose name is only in its Common Name, and one signed
// with SHA-1. Go's TLS refuses both, so the usual sign is a failed
// connection; with verification skipped the connection succeeds and the
// certificate itself is looked at. Either way the request is counted, as
// kube counts it, and its audit event is annotated with the backend's host.
package deprecatedcert

import (
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/metrics"
)

// Wrap returns rt, counting deprecated certificates in counters.
func Wrap(rt http.RoundTripper, counters metrics.X509Counters) http.RoundTripper {
	return &roundTripper{next: rt, counters: counters}
}

type roundTripper struct {
	next     http.RoundTripper
	counters metrics.X509Counters
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	Observe(req, resp, err, rt.counters)
	return resp, err
}

// Observe counts the outcome of req (resp or err) in counters, for a
// client whose transport must stay an *http.Transport (http.Client words
// its timeouts differently for other transports).
func Observe(req *http.Request, resp *http.Response, err error, counters metrics.X509Counters) {
	for _, c := range checks {
		switch {
		case err != nil && c.refused(err):
		case err == nil && resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 && c.served(resp.TLS.PeerCertificates):
		default:
			continue
		}
		c.counter(counters).Inc()
		if host := req.URL.Hostname(); host != "" {
			audit.AddAnnotation(req.Context(), c.id+".invalid-cert.kubernetes.io/"+host, c.reason)
		}
	}
}

var checks = []check{
	{id: "missing-san", reason: "relies on a legacy Common Name field instead of the SAN extension for subject validation",
		counter: func(c metrics.X509Counters) prometheus.Counter { return c.MissingSAN }, refused: refusedForCommonName, served: servedWithoutSAN},
	{id: "insecure-sha1", reason: "uses an insecure SHA-1 signature",
		counter: func(c metrics.X509Counters) prometheus.Counter { return c.InsecureSHA1 }, refused: refusedForSHA1, served: servedWithSHA1},
}

// check is one deprecation: how to tell it from a refused connection's
// error and from the certificates of one that was served.
type check struct {
	id, reason string
	counter    func(metrics.X509Counters) prometheus.Counter
	refused    func(error) bool
	served     func([]*x509.Certificate) bool
}

// refusedForCommonName: Go's verification found the name only in the
// Common Name.
func refusedForCommonName(err error) bool {
	var h x509.HostnameError
	return errors.As(err, &h) && strings.Contains(err.Error(), "x509: certificate relies on legacy Common Name field")
}

// refusedForSHA1: the chain did not verify because of a SHA-1 signature.
func refusedForSHA1(err error) bool {
	var u x509.UnknownAuthorityError
	if !errors.As(err, &u) {
		return false
	}
	msg := err.Error()
	i := strings.Index(msg, "x509: cannot verify signature: insecure algorithm")
	return i >= 0 && strings.Contains(msg[i:], "SHA1")
}

var subjectAltNameOID = asn1.ObjectIdentifier{2, 5, 29, 17}

// servedWithoutSAN: the leaf has no subjectAltName extension at all.
func servedWithoutSAN(chain []*x509.Certificate) bool {
	for _, ext := range chain[0].Extensions {
		if ext.Id.Equal(subjectAltNameOID) {
			return false
		}
	}
	return true
}

// servedWithSHA1: a certificate of the chain, other than a self-signed
// root whose signature nobody checks, is signed with SHA-1.
func servedWithSHA1(chain []*x509.Certificate) bool {
	for _, c := range chain {
		if (c.SignatureAlgorithm == x509.SHA1WithRSA || c.SignatureAlgorithm == x509.ECDSAWithSHA1) &&
			string(c.RawIssuer) != string(c.RawSubject) {
			return true
		}
	}
	return false
}
