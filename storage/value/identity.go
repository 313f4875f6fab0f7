package value

import (
	"bytes"
	"context"
	"errors"
)

// EncryptedPrefix starts every value an encrypting provider writes.
var EncryptedPrefix = []byte("k8s:enc:")

// ErrEncryptedData is the identity transformer's refusal of a value that
// an encrypting provider wrote, with kube's message.
var ErrEncryptedData = errors.New("identity transformer tried to read encrypted data")

// Identity stores values as they are. It refuses to read encrypted values,
// so that a server without the key fails loudly rather than decoding
// ciphertext.
var Identity Transformer = identity{}

type identity struct{}

func (identity) TransformFromStorage(_ context.Context, data, _ []byte) ([]byte, bool, error) {
	if bytes.HasPrefix(data, EncryptedPrefix) {
		return nil, false, ErrEncryptedData
	}
	return data, false, nil
}

func (identity) TransformToStorage(_ context.Context, data, _ []byte) ([]byte, error) {
	return data, nil
}
