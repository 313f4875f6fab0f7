package kmsv2

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	kmsapi "k8s.io/kms/apis/v2"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/storage/value"
	"github.com/capstan-io/capstan/storage/value/encrypt"
)

// kube's timings: a healthy answer is trusted for 20s and a failure for
// 3s; a seed may write for 3 minutes after the last healthy Status that
// confirmed its key ID; the background probe runs every minute, every 10
// seconds while failing.
const (
	positiveTTL     = 20 * time.Second
	negativeTTL     = 3 * time.Second
	writeSeedTTL    = 3 * time.Minute
	probeInterval   = time.Minute
	failingInterval = 10 * time.Second
)

// writeState is the seed new values are written with.
type writeState struct {
	transformer value.Transformer
	keyID       string
	dekSource   []byte // the seed, encrypted by the plugin
	annotations map[string][]byte
	cacheKey    string
	expires     time.Time
}

// Provider is one KMS v2 provider of the configuration: a value.Transformer
// (without its "k8s:enc:kms:v2:<name>:" prefix) and the health probe that
// also rotates its seed.
type Provider struct {
	name   string
	svc    Service
	now    func() time.Time
	logger *slog.Logger

	state atomic.Pointer[writeState]
	reads readCache

	mu      sync.Mutex // guards the probe's fields below
	lastErr error
	lastAt  time.Time
	ttl     time.Duration
	version string
}

// NewProvider returns the provider name over svc, probes the plugin once
// (a failure is retried in the background, as in kube) and keeps probing
// until ctx is done.
func NewProvider(ctx context.Context, name string, svc Service, logger *slog.Logger) *Provider {
	p := newProvider(name, svc, time.Now, logger)
	go p.probeLoop(ctx, p.Check(ctx) == nil)
	return p
}

func newProvider(name string, svc Service, now func() time.Time, logger *slog.Logger) *Provider {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Provider{name: name, svc: svc, now: now, logger: logger, ttl: negativeTTL, reads: readCache{m: map[string]value.Transformer{}}}
}

func (p *Provider) probeLoop(ctx context.Context, healthy bool) {
	for {
		interval := probeInterval
		if !healthy {
			interval = failingInterval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
		err := p.Check(ctx)
		if err != nil {
			p.logger.Error("kms plugin failed health check probe", "name", p.name, "err", err)
		}
		healthy = err == nil
	}
}

// Check is the provider's health check: the plugin's Status must be
// healthy, of API v2, with a valid key ID. A key ID other than the
// current seed's makes a new seed; the same one extends its life. Answers
// are cached for kube's TTLs.
func (p *Provider) Check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.now().Sub(p.lastAt) < p.ttl {
		return p.lastErr
	}
	err := p.check(ctx)
	p.lastErr, p.lastAt, p.ttl = err, p.now(), positiveTTL
	if err != nil {
		p.ttl = negativeTTL
	}
	return err
}

func (p *Provider) check(ctx context.Context) error {
	st, err := p.svc.Status(ctx)
	if err != nil {
		return fmt.Errorf("failed to perform status section of the healthz check for KMS Provider %s, error: %w", p.name, err)
	}
	var errs []error
	if st.Healthz != "ok" {
		errs = append(errs, fmt.Errorf("got unexpected healthz status: %s", st.Healthz))
	}
	if st.Version != "v2" && st.Version != "v2beta1" {
		errs = append(errs, fmt.Errorf("expected KMSv2 API version v2, got %s", st.Version))
	} else {
		if p.version == "" {
			p.version = st.Version
		}
		if p.version != st.Version {
			errs = append(errs, fmt.Errorf("KMSv2 API version should not change after the initial status response version %s, got %s", p.version, st.Version))
		}
	}
	if err := validateKeyID(st.KeyId); err != nil {
		errs = append(errs, fmt.Errorf("got invalid KMSv2 KeyID hash %q: %w", keyIDHash(st.KeyId), err))
	} else if err := p.rotateOnKeyIDChange(ctx, st.KeyId); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("kmsv2 Provider %s is not healthy, error: %w", p.name, joinErrors(errs))
	}
	return nil
}

// rotateOnKeyIDChange keeps the seed while the plugin's key ID is the
// one it was encrypted under, else makes and encrypts a new one.
func (p *Provider) rotateOnKeyIDChange(ctx context.Context, keyID string) error {
	expires := p.now().Add(writeSeedTTL)
	if cur := p.state.Load(); cur != nil && cur.keyID == keyID {
		next := *cur
		next.expires = expires
		p.state.Store(&next)
		return nil
	}
	next, err := p.newSeed(ctx)
	if err != nil {
		return fmt.Errorf("failed to rotate DEK: %w", err)
	}
	if next.keyID != keyID {
		return fmt.Errorf("failed to rotate DEK: the plugin encrypted with key ID hash %q, its status reports %q", keyIDHash(next.keyID), keyIDHash(keyID))
	}
	next.expires = expires
	p.state.Store(next)
	p.reads.set(next.cacheKey, next.transformer)
	return nil
}

// newSeed makes a random seed and has the plugin encrypt it.
func (p *Provider) newSeed(ctx context.Context) (*writeState, error) {
	seed := make([]byte, encrypt.SeedSize)
	start := time.Now()
	_, err := rand.Read(seed)
	metrics.DataKeyGeneration(start, err)
	if err != nil {
		return nil, err
	}
	t, err := encrypt.NewHKDFGCM(seed)
	if err != nil {
		return nil, err
	}
	resp, err := p.svc.Encrypt(ctx, string(uuid.NewUUID()), seed)
	if err != nil {
		return nil, fmt.Errorf("failed to encrypt DEK, error: %w", err)
	}
	o := &EncryptedObject{KeyID: resp.KeyId, EncryptedDEKSource: resp.Ciphertext, Annotations: resp.Annotations,
		DEKSourceType: HKDFSeed, EncryptedData: []byte{0}}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &writeState{transformer: t, keyID: resp.KeyId, dekSource: resp.Ciphertext, annotations: resp.Annotations,
		cacheKey: cacheKey(o)}, nil
}

func (p *Provider) currentState() (*writeState, error) {
	st := p.state.Load()
	if st == nil {
		return nil, errors.New("got unexpected nil transformer")
	}
	return st, nil
}

// TransformToStorage encrypts data with the current seed, if the plugin
// confirmed it recently enough.
func (p *Provider) TransformToStorage(ctx context.Context, data, ad []byte) ([]byte, error) {
	st, err := p.currentState()
	if err != nil {
		return nil, err
	}
	if now := p.now(); now.After(st.expires) {
		return nil, fmt.Errorf("encryptedDEKSource with keyID hash %q expired at %s (current time is %s)",
			keyIDHash(st.keyID), st.expires.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	sealed, err := st.transformer.TransformToStorage(ctx, data, ad)
	if err != nil {
		return nil, err
	}
	o := &EncryptedObject{EncryptedData: sealed, KeyID: st.keyID, EncryptedDEKSource: st.dekSource,
		Annotations: st.annotations, DEKSourceType: HKDFSeed}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o.Marshal(), nil
}

// TransformFromStorage decrypts a stored EncryptedObject, asking the
// plugin for its DEK source the first time it is seen. A value under
// another key ID than the current one is stale.
func (p *Provider) TransformFromStorage(ctx context.Context, data, ad []byte) ([]byte, bool, error) {
	o, err := Unmarshal(data)
	if err != nil {
		return nil, false, err
	}
	if err := o.Validate(); err != nil {
		return nil, false, err
	}
	st, err := p.currentState()
	if err != nil {
		return nil, false, err
	}
	key := cacheKey(o)
	t := p.reads.get(key)
	if t == nil {
		metrics.EnvelopeCacheMiss()
		source, err := p.svc.Decrypt(ctx, string(uuid.NewUUID()), &kmsapi.DecryptRequest{
			Ciphertext: o.EncryptedDEKSource, KeyId: o.KeyID, Annotations: o.Annotations,
		})
		if err != nil {
			return nil, false, fmt.Errorf("failed to decrypt DEK, error: %w", err)
		}
		if o.DEKSourceType == HKDFSeed {
			t, err = encrypt.NewHKDFGCM(source)
		} else {
			t, err = encrypt.NewGCM(source)
		}
		if err != nil {
			return nil, false, err
		}
		p.reads.set(key, t)
	}
	out, _, err := t.TransformFromStorage(ctx, o.EncryptedData, ad)
	if err != nil {
		return nil, false, err
	}
	return out, o.KeyID != st.keyID || o.DEKSourceType != HKDFSeed, nil
}

// cacheKey identifies a DEK source: the same encrypted source, key ID and
// annotations always decrypt to the same seed.
func cacheKey(o *EncryptedObject) string {
	c := &EncryptedObject{KeyID: o.KeyID, EncryptedDEKSource: o.EncryptedDEKSource, Annotations: o.Annotations, DEKSourceType: o.DEKSourceType}
	sum := sha256.Sum256(c.Marshal())
	return string(sum[:])
}

func keyIDHash(keyID string) string {
	if keyID == "" {
		return ""
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(keyID)))
}

// readCache keeps the transformers of DEK sources already decrypted. It is
// bounded: past maxReadCache entries it starts again, which costs one
// plugin call per source still in use.
type readCache struct {
	mu sync.RWMutex
	m  map[string]value.Transformer
}

const maxReadCache = 1024

func (c *readCache) get(key string) value.Transformer {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[key]
}

func (c *readCache) set(key string, t value.Transformer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxReadCache {
		c.m = map[string]value.Transformer{}
	}
	c.m[key] = t
}

// joinErrors formats errors as apimachinery's aggregate: one alone, or
// "[a, b]".
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msg := "["
	for i, e := range errs {
		if i > 0 {
			msg += ", "
		}
		msg += e.Error()
	}
	return errors.New(msg + "]")
}
