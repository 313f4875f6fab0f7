package authn

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"sync"
	"time"
)

// verifyCacheSize bounds the chains a verifyCache remembers: far more
// than the distinct client certificates of a cluster's components.
const verifyCacheSize = 4096

// verifyCache remembers the client certificate chains that verified, so
// that a client pays for the signature checks of its chain once rather
// than on every request: kube-apiserver's x509 authenticator verifies per
// request, which costs more CPU than serving a GET. A chain is
// remembered until the earliest expiry among the certificates it was
// verified through, and only for the same roots (a reloaded client CA
// bundle is a new pool) and key usages. Failures are remembered for
// failedVerifyHold: the front proxy's authenticator sees every client
// certificate of the cluster's own CA, none of which verifies against the
// front proxy's CA, and failing to build that chain cost a third of the
// server's CPU behind the aggregator (docs/profiles/aggregator-proxy.txt).
// They are kept apart from the successes, so that a client presenting
// many certificates that do not verify cannot flush the chains that did.
type verifyCache struct {
	mu        sync.Mutex
	successes map[verifyKey]verifyEntry
	failed    map[verifyKey]verifyEntry
}

// verifyEntry is a remembered verification: until when it holds, and its
// error if it failed.
type verifyEntry struct {
	until time.Time
	err   error
}

// failedVerifyHold is how long a failed verification is remembered: a
// certificate that becomes valid (its NotBefore passes) is accepted at
// most this late.
const failedVerifyHold = 10 * time.Second

type verifyKey struct {
	roots, intermediates *x509.CertPool
	usages               string
	presented            [sha256.Size]byte // the peer certificates' DER, in order
}

func newVerifyCache() *verifyCache {
	return &verifyCache{successes: map[verifyKey]verifyEntry{}, failed: map[verifyKey]verifyEntry{}}
}

// key is the cache key of verifying peers with opts; ok is false when the
// options are not cacheable (cacheableOptions).
func (c *verifyCache) key(peers []*x509.Certificate, opts x509.VerifyOptions, explicitIntermediates bool) (verifyKey, bool) {
	if c == nil || !cacheableOptions(opts) {
		return verifyKey{}, false
	}
	k := verifyKey{roots: opts.Roots, usages: usagesKey(opts.KeyUsages)}
	if explicitIntermediates {
		k.intermediates = opts.Intermediates
	}
	h := sha256.New()
	for _, p := range peers {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(p.Raw))))
		h.Write(p.Raw)
	}
	h.Sum(k.presented[:0])
	return k, true
}

// usagesKey identifies a list of key usages (fmt.Sprint cost a twentieth
// of a GET's CPU).
func usagesKey(usages []x509.ExtKeyUsage) string {
	b := make([]byte, 0, 8*len(usages))
	for _, u := range usages {
		b = binary.AppendVarint(b, int64(u))
	}
	return string(b)
}

// verified reports whether k was verified before and the outcome still
// holds at now: until when a success holds, or the failure.
func (c *verifyCache) verified(k verifyKey, now time.Time) (until time.Time, err error, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.successes[k]
	if !ok {
		e, ok = c.failed[k]
	}
	return e.until, e.err, ok && now.Before(e.until)
}

// remember records that k verified through chains, until the earliest
// NotAfter of the first chain (chainExpiry).
func (c *verifyCache) remember(k verifyKey, chains [][]*x509.Certificate) {
	if len(chains) == 0 {
		return
	}
	c.put(c.successes, k, verifyEntry{until: chainExpiry(chains)})
}

// rememberFailure records that k failed to verify with err, for
// failedVerifyHold from now.
func (c *verifyCache) rememberFailure(k verifyKey, err error, now time.Time) {
	c.put(c.failed, k, verifyEntry{until: now.Add(failedVerifyHold), err: err})
}

// put records e for k in entries, one of the cache's maps, first dropping
// what expired once the map is full (everything, if nothing had).
func (c *verifyCache) put(entries map[verifyKey]verifyEntry, k verifyKey, e verifyEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(entries) >= verifyCacheSize {
		now := time.Now()
		for key, old := range entries {
			if !now.Before(old.until) {
				delete(entries, key)
			}
		}
		if len(entries) >= verifyCacheSize {
			clear(entries)
		}
	}
	entries[k] = e
}

// chainExpiry is when a verification through chains stops holding: the
// earliest NotAfter of the first chain (zero without chains).
func chainExpiry(chains [][]*x509.Certificate) time.Time {
	if len(chains) == 0 {
		return time.Time{}
	}
	until := chains[0][0].NotAfter
	for _, cert := range chains[0][1:] {
		if cert.NotAfter.Before(until) {
			until = cert.NotAfter
		}
	}
	return until
}
