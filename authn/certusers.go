package authn

import (
	"crypto/x509"
	"runtime"
	"slices"
	"sync"
	"time"
	"weak"
)

// certUsersSize bounds the certificates a certUsers remembers: one per
// open connection that presented one, far more than a cluster's
// components open.
const certUsersSize = 4096

// certUsers remembers the user of each client certificate that verified,
// by the certificate's address. crypto/tls parses a connection's
// certificates once, and net/http and the HTTP/2 server hand every
// request on the connection the same ones, so the second and later
// requests of a connection find their user without hashing the chain
// (the verify cache's key) or building the user and its credential ID
// again. An entry holds only while the verification it stands for would
// be reused by the verify cache: for the same presented chain (compared
// by address), roots, intermediates pool and key usages, and until the
// chain's first expiry, which every request checks. Certificates are
// held weakly: an entry goes with its certificate, once the connection's
// state is collected.
type certUsers struct {
	mu      sync.Mutex // guards entries
	entries map[weak.Pointer[x509.Certificate]]*certUser
}

// certUser is what one certificate verified as, and under which options.
type certUser struct {
	intermediates []*x509.Certificate // presented after the leaf
	opts          x509.VerifyOptions  // as verifyOptions returned them
	until         time.Time           // the verification holds before this
	resp          *Response           // shared by the requests: not to be changed
}

func newCertUsers() *certUsers {
	return &certUsers{entries: map[weak.Pointer[x509.Certificate]]*certUser{}}
}

// lookup returns the user peers verified as, if they verified with opts
// before now and the verification still holds.
func (c *certUsers) lookup(peers []*x509.Certificate, opts x509.VerifyOptions, now time.Time) (*Response, bool) {
	if !cacheableOptions(opts) {
		return nil, false
	}
	c.mu.Lock()
	e := c.entries[weak.Make(peers[0])]
	c.mu.Unlock()
	if e == nil || !now.Before(e.until) || !sameOptions(e.opts, opts) ||
		!slices.Equal(e.intermediates, peers[1:]) {
		return nil, false
	}
	return e.resp, true
}

// remember records that peers verified with opts until until, as resp.
func (c *certUsers) remember(peers []*x509.Certificate, opts x509.VerifyOptions, until time.Time, resp *Response) {
	if !cacheableOptions(opts) {
		return
	}
	// The entry must not reach the leaf, or the leaf would never be
	// collected: the intermediates are copied out of the peers' array.
	e := &certUser{intermediates: slices.Clone(peers[1:]), opts: opts, until: until, resp: resp}
	e.opts.KeyUsages = slices.Clone(opts.KeyUsages)
	key := weak.Make(peers[0])
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		if len(c.entries) >= certUsersSize {
			clear(c.entries)
		}
		runtime.AddCleanup(peers[0], c.forget, key)
	}
	c.entries[key] = e
}

// forget drops the entry of a certificate that was collected.
func (c *certUsers) forget(key weak.Pointer[x509.Certificate]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

// cacheableOptions reports whether a verification with opts may be
// reused: not when it was for a fixed time or a host name, nor with the
// options that the caches do not compare.
func cacheableOptions(opts x509.VerifyOptions) bool {
	return opts.CurrentTime.IsZero() && opts.DNSName == "" &&
		opts.MaxConstraintComparisions == 0 && len(opts.CertificatePolicies) == 0
}

// sameOptions reports whether a and b verify alike, as far as cacheable
// options go.
func sameOptions(a, b x509.VerifyOptions) bool {
	return a.Roots == b.Roots && a.Intermediates == b.Intermediates && slices.Equal(a.KeyUsages, b.KeyUsages)
}
