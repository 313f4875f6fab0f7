// Package kmstest is a KMS v2 plugin for tests: it serves
// k8s.io/kms/apis/v2 on a unix socket and encrypts with AES-GCM under
// local keys, one per key ID. Tests rotate its key, make it unhealthy, and
// count its calls.
package kmstest

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	kmsapi "k8s.io/kms/apis/v2"
)

// Plugin is a running test plugin.
type Plugin struct {
	kmsapi.UnimplementedKeyManagementServiceServer

	// Endpoint is the plugin's address for an EncryptionConfiguration:
	// "unix://<socket path>".
	Endpoint string
	// Decrypts counts Decrypt calls (the server's cache of data keys
	// saves most).
	Decrypts atomic.Int64

	mu      sync.Mutex
	keys    map[string]cipher.AEAD // by key ID
	current string
	healthz string

	server   *grpc.Server
	listener net.Listener
}

// Start serves a plugin on socketPath, with one key whose ID is keyID.
func Start(socketPath, keyID string) (*Plugin, error) {
	_ = os.Remove(socketPath)
	l, err := net.Listen("unix", socketPath)
	if err != nil {
		return nil, err
	}
	p := &Plugin{Endpoint: "unix://" + socketPath, keys: map[string]cipher.AEAD{}, healthz: "ok", listener: l}
	if err := p.Rotate(keyID); err != nil {
		l.Close()
		return nil, err
	}
	p.server = grpc.NewServer()
	kmsapi.RegisterKeyManagementServiceServer(p.server, p)
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// Stop stops serving.
func (p *Plugin) Stop() { p.server.Stop() }

// Rotate makes a new key, named keyID, the one Encrypt uses and Status
// reports; the old keys still decrypt.
func (p *Plugin) Rotate(keyID string) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	return p.AddKey(keyID, key, true)
}

// AddKey adds an AES key (16, 24 or 32 bytes) under keyID, the current one
// if current.
func (p *Plugin) AddKey(keyID string, key []byte, current bool) error {
	block, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[keyID] = aead
	if current {
		p.current = keyID
	}
	return nil
}

// SetHealthz sets what Status reports as healthz ("ok" is healthy).
func (p *Plugin) SetHealthz(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.healthz = s
}

// Status reports the current key ID.
func (p *Plugin) Status(context.Context, *kmsapi.StatusRequest) (*kmsapi.StatusResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return &kmsapi.StatusResponse{Version: "v2", Healthz: p.healthz, KeyId: p.current}, nil
}

// Encrypt seals the plaintext under the current key: nonce + sealed.
func (p *Plugin) Encrypt(_ context.Context, req *kmsapi.EncryptRequest) (*kmsapi.EncryptResponse, error) {
	p.mu.Lock()
	keyID, aead := p.current, p.keys[p.current]
	p.mu.Unlock()
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return &kmsapi.EncryptResponse{
		Ciphertext:  aead.Seal(nonce, nonce, req.Plaintext, nil),
		KeyId:       keyID,
		Annotations: map[string][]byte{"kmstest.capstan.io": []byte("v1")},
	}, nil
}

// Decrypt opens a ciphertext of Encrypt under the key it names.
func (p *Plugin) Decrypt(_ context.Context, req *kmsapi.DecryptRequest) (*kmsapi.DecryptResponse, error) {
	p.Decrypts.Add(1)
	p.mu.Lock()
	aead, ok := p.keys[req.KeyId]
	p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown key ID %q", req.KeyId)
	}
	n := aead.NonceSize()
	if len(req.Ciphertext) < n {
		return nil, errors.New("ciphertext too short")
	}
	out, err := aead.Open(nil, req.Ciphertext[:n], req.Ciphertext[n:], nil)
	if err != nil {
		return nil, err
	}
	return &kmsapi.DecryptResponse{Plaintext: out}, nil
}
