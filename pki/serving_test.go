package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dirs are the folders of one test install.
type dirs struct{ data, certDir, other string }

func (d dirs) pki(name string) string { return filepath.Join(d.data, "pki", name) }

// foreignPair writes a serving pair that capstan did not generate (as envtest
// or a user would) and returns its paths.
func foreignPair(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	c, err := EnsureServing(ServingOptions{DataDir: t.TempDir(), CertDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return c.CertFile, c.KeyFile
}

func mustEnsure(t *testing.T, opts ServingOptions) ServingCerts {
	t.Helper()
	c, err := EnsureServing(opts)
	if err != nil {
		t.Fatalf("EnsureServing: %v", err)
	}
	return c
}

func serialOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseFirstCert(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c.SerialNumber.String()
}

func TestEnsureServing(t *testing.T) {
	base := func(d dirs) ServingOptions {
		return ServingOptions{DataDir: d.data, Hostname: "node-1", AdvertiseAddress: net.ParseIP("10.1.2.3")}
	}
	later := func(d time.Duration) func() time.Time {
		return func() time.Time { return time.Now().Add(d) }
	}
	day := 24 * time.Hour
	tests := []struct {
		name    string
		prepare func(t *testing.T, d dirs) ServingOptions
		wantErr string
		// what EnsureServing is expected to do
		generated                   bool
		newServing, newCA, newAdmin bool
		wantCertFile                func(d dirs) string
	}{
		{
			name:      "fresh install generates CA, serving and admin",
			prepare:   func(t *testing.T, d dirs) ServingOptions { return base(d) },
			generated: true, newServing: true, newCA: true, newAdmin: true,
		},
		{
			name: "restart with the same inputs reuses everything",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				mustEnsure(t, base(d))
				return base(d)
			},
			generated: true,
		},
		{
			name: "new hostname regenerates the serving certificate",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				mustEnsure(t, base(d))
				o := base(d)
				o.Hostname = "node-2"
				return o
			},
			generated: true, newServing: true,
		},
		{
			name: "new advertise address regenerates the serving certificate",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				mustEnsure(t, base(d))
				o := base(d)
				o.AdvertiseAddress = net.ParseIP("fd00::7")
				return o
			},
			generated: true, newServing: true,
		},
		{
			name: "fewer names than before keeps the certificate",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				o := base(d)
				o.ExtraDNS = []string{"api.example.com"}
				mustEnsure(t, o)
				return base(d)
			},
			generated: true,
		},
		{
			name: "leaf certificates expiring within 30 days are regenerated",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				mustEnsure(t, base(d))
				o := base(d)
				o.Now = later(340 * day)
				return o
			},
			generated: true, newServing: true, newAdmin: true,
		},
		{
			name: "leaf certificates with 60 days left are kept",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				mustEnsure(t, base(d))
				o := base(d)
				o.Now = later(300 * day)
				return o
			},
			generated: true,
		},
		{
			name: "an expiring CA is replaced with everything it signed",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				mustEnsure(t, base(d))
				o := base(d)
				o.Now = later(3640 * day)
				return o
			},
			generated: true, newServing: true, newCA: true, newAdmin: true,
		},
		{
			name: "a CA already present is reused for a missing serving pair",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				c := mustEnsure(t, base(d))
				os.Remove(c.CertFile)
				os.Remove(c.KeyFile)
				os.Remove(c.AdminCertFile)
				return base(d)
			},
			generated: true, newServing: true, newAdmin: true,
		},
		{
			name: "envtest-style pair in the cert dir is used as is",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				foreignPair(t, d.certDir)
				o := base(d)
				o.CertDir = d.certDir
				o.Hostname = "not-in-that-cert"
				return o
			},
			wantCertFile: func(d dirs) string { return filepath.Join(d.certDir, ServingCertName) },
		},
		{
			name: "envtest-style pair without a data dir",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				foreignPair(t, d.certDir)
				return ServingOptions{CertDir: d.certDir}
			},
			wantCertFile: func(d dirs) string { return filepath.Join(d.certDir, ServingCertName) },
		},
		{
			name: "generated into a separate cert dir",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				o := base(d)
				o.CertDir = d.certDir
				return o
			},
			generated: true, newServing: true, newCA: true, newAdmin: true,
			wantCertFile: func(d dirs) string { return filepath.Join(d.certDir, ServingCertName) },
		},
		{
			name: "explicit files are used as is",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				mustEnsure(t, base(d)) // a generated pair in the cert dir loses too
				o := base(d)
				o.TLSCertFile, o.TLSPrivateKeyFile = foreignPair(t, d.other)
				return o
			},
			wantCertFile: func(d dirs) string { return filepath.Join(d.other, ServingCertName) },
		},
		{
			name: "cert without key in the cert dir",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				_, key := foreignPair(t, d.certDir)
				os.Remove(key)
				o := base(d)
				o.CertDir = d.certDir
				return o
			},
			wantErr: "certificate and key must be supplied as a pair",
		},
		{
			name: "only one explicit file",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				return ServingOptions{TLSCertFile: "/x.crt"}
			},
			wantErr: "must be given together",
		},
		{
			name:    "no directories",
			prepare: func(t *testing.T, d dirs) ServingOptions { return ServingOptions{} },
			wantErr: "required",
		},
		{
			name: "nothing in the cert dir and no data dir",
			prepare: func(t *testing.T, d dirs) ServingOptions {
				return ServingOptions{CertDir: d.certDir}
			},
			wantErr: "no data dir",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := dirs{data: t.TempDir(), certDir: t.TempDir(), other: t.TempDir()}
			opts := tt.prepare(t, d)
			certFile := d.pki(ServingCertName)
			if tt.wantCertFile != nil {
				certFile = tt.wantCertFile(d)
			}
			before := [3]string{serialOf(t, certFile), serialOf(t, d.pki(CACertName)), serialOf(t, d.pki(AdminCertName))}

			got, err := EnsureServing(opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("EnsureServing: %v", err)
			}
			if got.CertFile != certFile || got.Generated != tt.generated {
				t.Errorf("CertFile, Generated = %s, %v; want %s, %v", got.CertFile, got.Generated, certFile, tt.generated)
			}
			after := [3]string{serialOf(t, certFile), serialOf(t, d.pki(CACertName)), serialOf(t, d.pki(AdminCertName))}
			for i, want := range []bool{tt.newServing, tt.newCA, tt.newAdmin} {
				if changed := before[i] != after[i]; changed != want {
					t.Errorf("%s: changed = %v, want %v", []string{"serving", "CA", "admin"}[i], changed, want)
				}
			}
			if !tt.generated && (got.ClientCAs != nil || got.AdminCertFile != "" || fileExists(d.pki(CACertName)) != (before[1] != "")) {
				t.Errorf("a pair capstan does not manage must not bring a CA or admin certificate: %+v", got)
			}
			if cert, err := got.Certificate(); err != nil || cert.Leaf.SerialNumber.String() != after[0] {
				t.Errorf("Certificate() = %v, %v; want the one in %s", cert, err, certFile)
			}
		})
	}
}

func TestGeneratedCertificates(t *testing.T) {
	dataDir := t.TempDir()
	opts := ServingOptions{
		DataDir:          dataDir,
		Hostname:         "node-1",
		AdvertiseAddress: net.ParseIP("10.1.2.3"),
		ExtraIPs:         []net.IP{net.ParseIP("10.96.0.1")},
	}
	c := mustEnsure(t, opts)

	for _, key := range []string{c.KeyFile, c.CAKeyFile, c.AdminKeyFile} {
		fi, err := os.Stat(key)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %o, want 600", key, perm)
		}
	}
	serving, err := readPair(c.CertFile, c.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := serving.key.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("serving key is %T, want ECDSA P-256", serving.key)
	}
	for _, name := range []string{"localhost", "127.0.0.1", "::1", "node-1", "10.1.2.3", "10.96.0.1",
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"} {
		_, err := serving.cert.Verify(x509.VerifyOptions{DNSName: name, Roots: c.ClientCAs})
		if err != nil {
			t.Errorf("serving certificate for %q: %v", name, err)
		}
	}

	admin, err := readPair(c.AdminCertFile, c.AdminKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if s := admin.cert.Subject; s.CommonName != "admin" || len(s.Organization) != 1 || s.Organization[0] != "system:masters" {
		t.Errorf("admin subject = %v", s)
	}
	_, err = admin.cert.Verify(x509.VerifyOptions{Roots: c.ClientCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Errorf("admin certificate as a client certificate: %v", err)
	}
}
