// Package oidctest is an OpenID Connect provider for tests: an HTTPS
// server with a discovery document and a key set, and tokens signed by its
// keys.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Provider is a running test issuer. Its URL is the issuer URL (https).
type Provider struct {
	URL string
	// CAFile holds the PEM certificate the server's TLS certificate is
	// checked with; CAPEM the same bytes.
	CAFile string
	CAPEM  []byte
	// KeyFetches counts the requests for the key set.
	KeyFetches atomic.Int64

	srv  *httptest.Server
	mu   sync.Mutex
	keys []*rsa.PrivateKey // the first signs; all are published
	kids []string
}

// Start starts a provider, stopped when the test ends.
func Start(t testing.TB) *Provider {
	t.Helper()
	p := &Provider{}
	p.AddKey(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": p.URL, "jwks_uri": p.URL + "/keys", "authorization_endpoint": p.URL + "/auth",
			"token_endpoint": p.URL + "/token", "response_types_supported": []string{"id_token"},
			"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		p.KeyFetches.Add(1)
		writeJSON(w, p.keySet())
	})
	p.srv = httptest.NewTLSServer(mux)
	t.Cleanup(p.srv.Close)
	p.URL = p.srv.URL
	p.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	p.CAFile = filepath.Join(t.TempDir(), "oidc-ca.crt")
	if err := os.WriteFile(p.CAFile, p.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// AddKey makes a new key the signing one (key rotation); the old keys
// stay published.
func (p *Provider) AddKey(t testing.TB) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append([]*rsa.PrivateKey{key}, p.keys...)
	p.kids = append([]string{fmt.Sprintf("key-%d", len(p.kids)+1)}, p.kids...)
}

func (p *Provider) keySet() jose.JSONWebKeySet {
	p.mu.Lock()
	defer p.mu.Unlock()
	var set jose.JSONWebKeySet
	for i, k := range p.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: p.kids[i], Algorithm: string(jose.RS256), Use: "sig"})
	}
	return set
}

// Claims are a token's claims; Defaults fills the usual ones.
type Claims map[string]any

// Claims returns iss, sub, aud, iat and exp (an hour from now) for aud,
// plus extra.
func (p *Provider) Claims(aud string, extra Claims) Claims {
	now := time.Now()
	c := Claims{"iss": p.URL, "sub": "alice", "aud": aud, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// Sign signs claims with the provider's current key.
func (p *Provider) Sign(t testing.TB, claims Claims) string {
	t.Helper()
	p.mu.Lock()
	key, kid := p.keys[0], p.kids[0]
	p.mu.Unlock()
	return SignWith(t, key, kid, claims)
}

// SignWith signs claims with key, naming kid in the header.
func SignWith(t testing.TB, key *rsa.PrivateKey, kid string, claims Claims) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	token, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// SigningKID is the key ID of the current signing key.
func (p *Provider) SigningKID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kids[0]
}
