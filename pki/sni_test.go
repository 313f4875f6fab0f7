package pki

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestParseSNICertKey(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    SNICertKey
		wantErr bool
	}{
		{in: "a.crt,a.key", want: SNICertKey{CertFile: "a.crt", KeyFile: "a.key"}},
		{in: "a.crt,a.key:*.Foo.com,foo.com", want: SNICertKey{CertFile: "a.crt", KeyFile: "a.key", Names: []string{"*.foo.com", "foo.com"}}},
		{in: "a.crt,a.key:10.0.0.1", want: SNICertKey{CertFile: "a.crt", KeyFile: "a.key", Names: []string{"10.0.0.1"}}},
		{in: "a.crt", wantErr: true},
		{in: ",a.key", wantErr: true},
		{in: "a.crt,a.key,b", wantErr: true},
		{in: "a.crt,a.key:", wantErr: true},
		{in: "a.crt,a.key:foo.com,,bar", wantErr: true},
	} {
		got, err := ParseSNICertKey(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// namedPair writes a certificate for cn and dns, signed by a fresh CA, and
// returns its files.
func namedPair(t *testing.T, cn string, dns ...string) (certFile, keyFile string) {
	t.Helper()
	now := time.Now()
	ca, err := newCA(now)
	if err != nil {
		t.Fatal(err)
	}
	p, err := issue(ca, leafSpec{subject: pkix.Name{CommonName: cn}, usage: x509.ExtKeyUsageServerAuth, dns: dns, ips: []net.IP{net.ParseIP("10.1.2.3")}}, now)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := writePair(p, certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestCertSelector(t *testing.T) {
	def := mustEnsure(t, ServingOptions{CertDir: t.TempDir(), DataDir: t.TempDir()})
	aCert, aKey := namedPair(t, "a.example.com", "a.example.com", "*.wild.example.com")
	bCert, bKey := namedPair(t, "b", "b.example.com")
	cCert, cKey := namedPair(t, "c", "c.example.com")
	s, err := NewCertSelector(def.Certificate, []SNICertKey{
		{CertFile: aCert, KeyFile: aKey},
		// Explicit names beat names read from a.crt.
		{CertFile: bCert, KeyFile: bKey, Names: []string{"a.example.com", "x.wild.example.com"}},
		// An earlier pair's explicit name beats a later one's.
		{CertFile: cCert, KeyFile: cKey, Names: []string{"b.example.com", "c.example.com"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cnOf := func(hello *tls.ClientHelloInfo) string {
		c, err := s.GetCertificate(hello)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.Subject.CommonName
	}
	defaultCN := cnOf(nil)
	for _, tc := range []struct {
		serverName, want string
	}{
		{"a.example.com", "b"},
		{"A.Example.COM.", "b"},
		{"x.wild.example.com", "b"},
		{"y.wild.example.com", "a.example.com"},
		{"deeper.y.wild.example.com", defaultCN},
		{"b.example.com", "c"},
		{"c.example.com", "c"},
		{"10.1.2.3", "a.example.com"},
		{"unknown.example.com", defaultCN},
		{"", defaultCN},
	} {
		if got := cnOf(&tls.ClientHelloInfo{ServerName: tc.serverName}); got != tc.want {
			t.Errorf("server name %q: got certificate %q, want %q", tc.serverName, got, tc.want)
		}
	}

	if _, err := NewCertSelector(def.Certificate, []SNICertKey{{CertFile: aCert, KeyFile: bKey}}); err == nil {
		t.Error("a mismatched pair loaded")
	}
}
