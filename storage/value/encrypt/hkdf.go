package encrypt

import (
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/capstan-io/capstan/storage/value"
)

// SeedSize is the size of the seed of NewHKDFGCM and of the info every
// value starts with.
const SeedSize = 32

// NewHKDFGCM returns kube's extended-nonce AES-GCM of KMS v2 data keys:
// each value starts with 32 random bytes of info, and is sealed with
// AES-256-GCM under HKDF-Expand(SHA-256, seed, info), so that one seed
// encrypts far more values than a single GCM key safely could.
func NewHKDFGCM(seed []byte) (value.Transformer, error) {
	if len(seed) < SeedSize {
		return nil, fmt.Errorf("invalid seed length %d used for key generation", len(seed))
	}
	return hkdfGCM{seed: seed}, nil
}

type hkdfGCM struct{ seed []byte }

func (t hkdfGCM) keyed(info []byte) (value.Transformer, error) {
	key, err := hkdf.Expand(sha256.New, t.seed, string(info), 32)
	if err != nil {
		return nil, fmt.Errorf("failed to KDF expand seed with info: %w", err)
	}
	return NewGCM(key)
}

func (t hkdfGCM) TransformFromStorage(ctx context.Context, data, ad []byte) ([]byte, bool, error) {
	if len(data) < SeedSize {
		return nil, false, errors.New("the stored data was shorter than the required size")
	}
	g, err := t.keyed(data[:SeedSize])
	if err != nil {
		return nil, false, fmt.Errorf("failed to derive read key from KDF: %w", err)
	}
	return g.TransformFromStorage(ctx, data[SeedSize:], ad)
}

func (t hkdfGCM) TransformToStorage(ctx context.Context, data, ad []byte) ([]byte, error) {
	info := make([]byte, SeedSize)
	if _, err := rand.Read(info); err != nil {
		return nil, fmt.Errorf("failed to generate info for KDF: %w", err)
	}
	g, err := t.keyed(info)
	if err != nil {
		return nil, fmt.Errorf("failed to derive write key from KDF: %w", err)
	}
	sealed, err := g.TransformToStorage(ctx, data, ad)
	if err != nil {
		return nil, err
	}
	return append(info, sealed...), nil
}
