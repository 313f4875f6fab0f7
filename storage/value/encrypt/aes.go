package encrypt

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/capstan-io/capstan/storage/value"
)

var (
	errTooShort         = errors.New("the stored data was shorter than the required size")
	errNotBlockMultiple = errors.New("the stored data is not a multiple of the block size")
	errPKCS7Data        = errors.New("invalid PKCS7 data (empty or not padded)")
	errPKCS7Padding     = errors.New("invalid padding on input")
)

// gcmNonceSize is the nonce size of every stored AES-GCM value.
const gcmNonceSize = 12

// NewGCM returns AES-GCM under key (16, 24 or 32 bytes): a random 12-byte
// nonce, then the sealed data, the etcd key authenticated.
func NewGCM(key []byte) (value.Transformer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return gcm{aead: aead}, nil
}

type gcm struct{ aead cipher.AEAD }

func (t gcm) TransformFromStorage(_ context.Context, data, ad []byte) ([]byte, bool, error) {
	if len(data) < gcmNonceSize {
		return nil, false, errTooShort
	}
	out, err := t.aead.Open(nil, data[:gcmNonceSize], data[gcmNonceSize:], ad)
	return out, false, err
}

func (t gcm) TransformToStorage(_ context.Context, data, ad []byte) ([]byte, error) {
	out := make([]byte, gcmNonceSize, gcmNonceSize+len(data)+t.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("failed to write nonce for AES-GCM: %w", err)
	}
	return t.aead.Seal(out, out[:gcmNonceSize], data, ad), nil
}

// NewCBC returns AES-CBC under key (16, 24 or 32 bytes): a random IV, then
// the PKCS#7 padded data. It authenticates nothing; kube keeps it for
// existing clusters and so does capstan.
func NewCBC(key []byte) (value.Transformer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cbc{block: block}, nil
}

type cbc struct{ block cipher.Block }

func (t cbc) TransformFromStorage(_ context.Context, data, _ []byte) ([]byte, bool, error) {
	if len(data) < aes.BlockSize {
		return nil, false, errTooShort
	}
	iv, data := data[:aes.BlockSize], data[aes.BlockSize:]
	if len(data)%aes.BlockSize != 0 {
		return nil, false, errNotBlockMultiple
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(t.block, iv).CryptBlocks(out, data)
	if len(out) == 0 {
		return nil, false, errPKCS7Data
	}
	pad := int(out[len(out)-1])
	if pad == 0 || pad > len(out) {
		return nil, false, errPKCS7Data
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, false, errPKCS7Padding
		}
	}
	return out[:len(out)-pad], false, nil
}

func (t cbc) TransformToStorage(_ context.Context, data, _ []byte) ([]byte, error) {
	pad := aes.BlockSize - len(data)%aes.BlockSize
	out := make([]byte, aes.BlockSize+len(data)+pad)
	if _, err := rand.Read(out[:aes.BlockSize]); err != nil {
		return nil, errors.New("unable to read sufficient random bytes")
	}
	copy(out[aes.BlockSize:], data)
	for i := len(out) - pad; i < len(out); i++ {
		out[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(t.block, out[:aes.BlockSize]).CryptBlocks(out[aes.BlockSize:], out[aes.BlockSize:])
	return out, nil
}
