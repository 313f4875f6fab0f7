package authn

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// testCA signs certificates for tests.
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newTestCA(t *testing.T, cn string, parent *testCA) *testCA {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: cn},
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	cert, key := signTestCert(t, tmpl, parent)
	return &testCA{cert: cert, key: key}
}

// client issues a client certificate for subject, valid now unless changed
// by edit.
func (ca *testCA) client(t *testing.T, subject pkix.Name, edit ...func(*x509.Certificate)) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     subject,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, e := range edit {
		e(tmpl)
	}
	cert, _ := signTestCert(t, tmpl, ca)
	return cert
}

func signTestCert(t *testing.T, tmpl *x509.Certificate, parent *testCA) (*x509.Certificate, crypto.Signer) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl.SerialNumber = serial
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	}
	parentCert, parentKey := tmpl, crypto.Signer(key)
	if parent != nil {
		parentCert, parentKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, key.Public(), parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func requestWithPeers(peers ...*x509.Certificate) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: peers}
	return r
}

func uidName(v any) pkix.AttributeTypeAndValue {
	return pkix.AttributeTypeAndValue{Type: uidOID, Value: v}
}

func TestX509(t *testing.T) {
	root := newTestCA(t, "root", nil)
	inter := newTestCA(t, "intermediate", root)
	stranger := newTestCA(t, "stranger", nil)
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)
	withRoots := func() x509.VerifyOptions { return x509.VerifyOptions{Roots: roots} }

	jane := root.client(t, pkix.Name{CommonName: "jane", Organization: []string{"dev", "ops"}})
	expired := root.client(t, pkix.Name{CommonName: "old"}, func(c *x509.Certificate) {
		c.NotBefore, c.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	})
	serverOnly := root.client(t, pkix.Name{CommonName: "srv"}, func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})
	viaInter := inter.client(t, pkix.Name{CommonName: "bob"})
	withUID := func(vals ...any) *x509.Certificate {
		return root.client(t, pkix.Name{CommonName: "u"}, func(c *x509.Certificate) {
			for _, v := range vals {
				c.Subject.ExtraNames = append(c.Subject.ExtraNames, uidName(v))
			}
		})
	}
	anyUsage := func() x509.VerifyOptions {
		return x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
	}

	tests := []struct {
		name       string
		opts       func() x509.VerifyOptions
		req        *http.Request
		wantOK     bool
		wantUser   string
		wantUID    string
		wantGroups []string
		wantErr    []string
	}{
		{name: "plain HTTP", req: httptest.NewRequest("GET", "/", nil)},
		{name: "TLS without a certificate", req: requestWithPeers()},
		{name: "no client CA configured", opts: func() x509.VerifyOptions { return x509.VerifyOptions{} }, req: requestWithPeers(jane)},
		{name: "valid certificate", req: requestWithPeers(jane), wantOK: true, wantUser: "jane", wantGroups: []string{"dev", "ops"}},
		{name: "through an intermediate sent by the client", req: requestWithPeers(viaInter, inter.cert), wantOK: true, wantUser: "bob"},
		{name: "intermediate not sent", req: requestWithPeers(viaInter),
			wantErr: []string{"verifying certificate SN=", "failed: x509: certificate signed by unknown authority"}},
		{name: "unknown authority", req: requestWithPeers(stranger.client(t, pkix.Name{CommonName: "eve"})),
			wantErr: []string{"x509: certificate signed by unknown authority"}},
		{name: "expired", req: requestWithPeers(expired), wantErr: []string{"x509: certificate has expired or is not yet valid"}},
		{name: "server-only usage", req: requestWithPeers(serverOnly), wantErr: []string{"x509: certificate specifies an incompatible key usage"}},
		{name: "options may name other usages", opts: anyUsage, req: requestWithPeers(serverOnly), wantOK: true, wantUser: "srv"},
		{name: "no common name", req: requestWithPeers(root.client(t, pkix.Name{Organization: []string{"dev"}}))},
		{name: "UID", req: requestWithPeers(withUID("u-1")), wantOK: true, wantUser: "u", wantUID: "u-1"},
		{name: "two UIDs", req: requestWithPeers(withUID("a", "b")), wantErr: []string{"expected 1 UID, but found multiple: [a b]"}},
		{name: "empty UID", req: requestWithPeers(withUID("")), wantErr: []string{"UID cannot be an empty string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if opts == nil {
				opts = withRoots
			}
			resp, ok, err := NewX509(opts).AuthenticateRequest(tt.req)
			if len(tt.wantErr) > 0 {
				for _, want := range tt.wantErr {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("err = %v, want it to contain %q", err, want)
					}
				}
				if ok || resp != nil {
					t.Errorf("= %v, %v alongside an error", resp, ok)
				}
				return
			}
			if err != nil || ok != tt.wantOK {
				t.Fatalf("= %v, %v; want %v, nil", ok, err, tt.wantOK)
			}
			if !ok {
				return
			}
			u := resp.User
			if u.Name != tt.wantUser || u.UID != tt.wantUID || !slices.Equal(u.Groups, tt.wantGroups) {
				t.Errorf("user = %+v, want %q uid %q groups %v", u, tt.wantUser, tt.wantUID, tt.wantGroups)
			}
			sum := sha256.Sum256(tt.req.TLS.PeerCertificates[0].Raw)
			if got := u.Extra[CredentialIDKey]; !slices.Equal(got, []string{"X509SHA256=" + hex.EncodeToString(sum[:])}) {
				t.Errorf("credential id = %v", got)
			}
		})
	}
}

func TestCertificateIdentifier(t *testing.T) {
	c := &x509.Certificate{SerialNumber: big.NewInt(42), SubjectKeyId: []byte{0xab, 0x01}, AuthorityKeyId: nil}
	if got, want := certificateIdentifier(c), "SN=42, SKID=AB:01, AKID="; got != want {
		t.Errorf("= %q, want %q", got, want)
	}
}

// TestX509VerifyCache checks that a remembered verification is used only
// for the same presented chain, roots and usages, and only until the
// chain's first expiry.
func TestX509VerifyCache(t *testing.T) {
	root := newTestCA(t, "root", nil)
	inter := newTestCA(t, "intermediate", root)
	other := newTestCA(t, "other", nil)
	rootPool, otherPool := x509.NewCertPool(), x509.NewCertPool()
	rootPool.AddCert(root.cert)
	otherPool.AddCert(other.cert)
	jane := root.client(t, pkix.Name{CommonName: "jane"})
	bob := inter.client(t, pkix.Name{CommonName: "bob"})
	srv := root.client(t, pkix.Name{CommonName: "srv"}, func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})

	opts := x509.VerifyOptions{Roots: rootPool}
	auth := NewX509(func() x509.VerifyOptions { return opts })
	steps := []struct {
		name   string
		opts   x509.VerifyOptions
		req    *http.Request
		wantOK bool
	}{
		{"jane verifies", x509.VerifyOptions{Roots: rootPool}, requestWithPeers(jane), true},
		{"jane again", x509.VerifyOptions{Roots: rootPool}, requestWithPeers(jane), true},
		{"jane after the roots changed", x509.VerifyOptions{Roots: otherPool}, requestWithPeers(jane), false},
		{"bob with his intermediate", x509.VerifyOptions{Roots: rootPool}, requestWithPeers(bob, inter.cert), true},
		{"bob without it", x509.VerifyOptions{Roots: rootPool}, requestWithPeers(bob), false},
		{"srv with any usage", x509.VerifyOptions{Roots: rootPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}, requestWithPeers(srv), true},
		{"srv with client auth", x509.VerifyOptions{Roots: rootPool}, requestWithPeers(srv), false},
	}
	for _, s := range steps {
		opts = s.opts
		_, ok, err := auth.AuthenticateRequest(s.req)
		if ok != s.wantOK || (err == nil) != s.wantOK {
			t.Errorf("%s: ok = %v, err = %v; want ok %v", s.name, ok, err, s.wantOK)
		}
	}

	c := newVerifyCache()
	k, ok := c.key([]*x509.Certificate{jane}, x509.VerifyOptions{Roots: rootPool}, false)
	if !ok {
		t.Fatal("plain options are not cacheable")
	}
	c.remember(k, [][]*x509.Certificate{{jane, root.cert}})
	if _, _, ok := c.verified(k, time.Now()); !ok {
		t.Error("a remembered chain is not verified")
	}
	if _, _, ok := c.verified(k, jane.NotAfter); ok {
		t.Error("a remembered chain is still verified when its certificate expires")
	}
	failed, _ := c.key([]*x509.Certificate{jane}, x509.VerifyOptions{Roots: otherPool}, false)
	now := time.Now()
	c.rememberFailure(failed, errors.New("no chain"), now)
	if _, err, ok := c.verified(failed, now.Add(failedVerifyHold/2)); !ok || err == nil {
		t.Errorf("a remembered failure: ok = %v, err = %v; want it remembered with its error", ok, err)
	}
	if _, _, ok := c.verified(failed, now.Add(failedVerifyHold)); ok {
		t.Error("a remembered failure is still remembered after failedVerifyHold")
	}
	if _, ok := c.key([]*x509.Certificate{jane}, x509.VerifyOptions{Roots: rootPool, CurrentTime: time.Now()}, false); ok {
		t.Error("options with a fixed time are cacheable")
	}
}

// BenchmarkX509 is the authentication of a connection's later requests:
// the same parsed client certificate on every request.
func BenchmarkX509(b *testing.B) {
	t := &testing.T{}
	root := newTestCA(t, "root", nil)
	roots := x509.NewCertPool()
	roots.AddCert(root.cert)
	auth := NewX509(func() x509.VerifyOptions {
		return x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	})
	r := requestWithPeers(root.client(t, pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := auth.AuthenticateRequest(r); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
