package authn

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"

	"github.com/capstan-io/capstan/metrics"
	"golang.org/x/sync/singleflight"
)

// Token cache settings of kube-apiserver: the union of token authenticators
// remembers successes for 10s and failures not at all; a token webhook's
// answers are kept for --authentication-token-webhook-cache-ttl.
const (
	TokenSuccessCacheTTL = 10 * time.Second
	TokenFailureCacheTTL = 0
	// maxCachedTokens bounds the cache: past it, expired entries go and
	// then arbitrary ones, so a flood of distinct tokens costs memory once.
	maxCachedTokens = 1 << 16
)

// TokenCacheOptions configure NewCachedToken.
type TokenCacheOptions struct {
	// SuccessTTL and FailureTTL are how long an accepted and a refused
	// token are remembered (0: not at all).
	SuccessTTL, FailureTTL time.Duration
	// CacheErrors keeps errors with failures; without it only "no
	// opinion" answers are cached as failures.
	CacheErrors bool
	// MaxEntries bounds the cache (maxCachedTokens when 0).
	MaxEntries int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// NewCachedToken remembers a's answers, keyed by a keyed hash of the token
// and the audiences the context asks for (never the token itself), so that
// a token checked a moment ago costs no signature check, store read or
// webhook call. Concurrent checks of one key share one call of a.
func NewCachedToken(a TokenAuthenticator, o TokenCacheOptions) TokenAuthenticator {
	if o.SuccessTTL <= 0 && o.FailureTTL <= 0 {
		return a
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = maxCachedTokens
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &tokenCache{a: a, o: o, entries: map[[sha256.Size]byte]cachedToken{}}
	if _, err := rand.Read(c.hashKey[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return c
}

type tokenCache struct {
	a       TokenAuthenticator
	o       TokenCacheOptions
	hashKey [32]byte
	group   singleflight.Group

	mu      sync.Mutex
	entries map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	resp    *Response
	ok      bool
	err     error
	expires time.Time
}

func (c *tokenCache) AuthenticateToken(ctx context.Context, token string) (*Response, bool, error) {
	start := time.Now()
	key := c.key(ctx, token)
	if e, found := c.get(key); found {
		metrics.TokenCacheRequest(start, true)
		return e.resp, e.ok, e.err
	}
	defer metrics.TokenCacheRequest(start, false)
	defer metrics.TokenCacheBlocked()()
	v, _, _ := c.group.Do(string(key[:]), func() (any, error) {
		fetched := metrics.TokenCacheFetching()
		// The answer outlives the request that asked: it must not end
		// with that request's cancellation.
		resp, ok, err := c.a.AuthenticateToken(context.WithoutCancel(ctx), token)
		fetched(err == nil)
		e := cachedToken{resp: resp, ok: ok, err: err}
		c.put(key, e)
		return e, nil
	})
	e := v.(cachedToken)
	return e.resp, e.ok, e.err
}

// key is an HMAC of the audiences and the token: a dump of the cache
// reveals no token.
func (c *tokenCache) key(ctx context.Context, token string) [sha256.Size]byte {
	h := hmac.New(sha256.New, c.hashKey[:])
	var n [8]byte
	auds, set := AudiencesFrom(ctx)
	if set {
		binary.BigEndian.PutUint64(n[:], uint64(len(auds)))
		h.Write(n[:])
	}
	for _, a := range auds {
		binary.BigEndian.PutUint64(n[:], uint64(len(a)))
		h.Write(n[:])
		h.Write([]byte(a))
	}
	h.Write([]byte(token))
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

func (c *tokenCache) get(key [sha256.Size]byte) (cachedToken, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return cachedToken{}, false
	}
	if !c.o.Now().Before(e.expires) {
		delete(c.entries, key)
		return cachedToken{}, false
	}
	return e, true
}

func (c *tokenCache) put(key [sha256.Size]byte, e cachedToken) {
	ttl := c.o.SuccessTTL
	if !e.ok {
		ttl = c.o.FailureTTL
		if e.err != nil && !c.o.CacheErrors {
			ttl = 0
		}
	}
	if ttl <= 0 {
		return
	}
	now := c.o.Now()
	e.expires = now.Add(ttl)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.o.MaxEntries {
		for k, old := range c.entries {
			if !now.Before(old.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.o.MaxEntries {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = e
}
