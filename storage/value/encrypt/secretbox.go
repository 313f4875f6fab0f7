package encrypt

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"golang.org/x/crypto/nacl/secretbox"

	"github.com/capstan-io/capstan/storage/value"
)

const secretboxNonceSize = 24

// NewSecretbox returns XSalsa20-Poly1305 under a 32-byte key: a random
// 24-byte nonce, then the box.
func NewSecretbox(key []byte) (value.Transformer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("expected key size 32 for secretbox provider, got %v", len(key))
	}
	var t box
	copy(t.key[:], key)
	return t, nil
}

type box struct{ key [32]byte }

func (t box) TransformFromStorage(_ context.Context, data, _ []byte) ([]byte, bool, error) {
	if len(data) < secretbox.Overhead+secretboxNonceSize {
		return nil, false, errTooShort
	}
	var nonce [secretboxNonceSize]byte
	copy(nonce[:], data)
	out, ok := secretbox.Open(nil, data[secretboxNonceSize:], &nonce, &t.key)
	if !ok {
		// kube's message, though the cause is a failed authentication.
		return nil, false, errors.New("output array was not large enough for encryption")
	}
	return out, false, nil
}

func (t box) TransformToStorage(_ context.Context, data, _ []byte) ([]byte, error) {
	var nonce [secretboxNonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	return secretbox.Seal(nonce[:], data, &nonce, &t.key), nil
}
