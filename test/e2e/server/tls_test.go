package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/pki"
)

// TestTLSServing starts capstan with an SNI certificate, TLS 1.3 only, and a
// --client-ca-file that changes while it runs.
func TestTLSServing(t *testing.T) {
	sni, err := pki.EnsureServing(pki.ServingOptions{CertDir: t.TempDir(), DataDir: t.TempDir(), ExtraDNS: []string{"sni.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	// Another install's admin certificate: signed by a CA capstan does not
	// trust until it appears in --client-ca-file.
	other, err := pki.EnsureServing(pki.ServingOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	clientCAFile := filepath.Join(t.TempDir(), "client-ca.crt")
	e2eutil.WriteFile(t, clientCAFile, sni.CAPEM)

	s := testkit.StartServer(t,
		"--tls-sni-cert-key="+sni.CertFile+","+sni.KeyFile+":sni.example.com",
		"--tls-min-version=VersionTLS13",
		"--client-ca-file="+clientCAFile,
	)
	addr := strings.TrimPrefix(s.URL, "https://")

	leafFor := func(serverName string) *x509.Certificate {
		t.Helper()
		conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: serverName, InsecureSkipVerify: true})
		if err != nil {
			t.Fatalf("dialling with server name %q: %v", serverName, err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0]
	}
	sniLeaf := readLeaf(t, sni.CertFile)
	if got := leafFor("sni.example.com"); !got.Equal(sniLeaf) {
		t.Errorf("server name sni.example.com got certificate %q, want the --tls-sni-cert-key one", got.Subject)
	}
	if got := leafFor("localhost"); got.Equal(sniLeaf) {
		t.Error("server name localhost got the SNI certificate, want the default one")
	}

	if conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12}); err == nil {
		conn.Close()
		t.Error("a TLS 1.2 handshake succeeded with --tls-min-version=VersionTLS13")
	}

	// The other install's admin: 401 until its CA is added to the file.
	cert, err := tls.LoadX509KeyPair(other.AdminCertFile, other.AdminKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, Certificates: []tls.Certificate{cert},
	}}}
	code := func() int {
		t.Helper()
		resp, err := client.Get((&url.URL{Scheme: "https", Host: addr, Path: "/api/v1/namespaces"}).String())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		client.CloseIdleConnections()
		return resp.StatusCode
	}
	if got := code(); got != http.StatusUnauthorized {
		t.Fatalf("a certificate from an untrusted CA got %d, want 401", got)
	}
	e2eutil.WriteFile(t, clientCAFile, append(append([]byte{}, sni.CAPEM...), other.CAPEM...))
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return code() == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("a certificate from a CA added to --client-ca-file was not accepted: %v", err)
	}
}

// TestTLSFlagsRejected checks the start-up errors of bad TLS flags.
func TestTLSFlagsRejected(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--tls-min-version=VersionTLS14", `unknown tls version "VersionTLS14"`},
		{"--tls-cipher-suites=TLS_NOPE", "cipher suite TLS_NOPE not supported or doesn't exist"},
		{"--tls-curve-preferences=0", "curve preference 0 is out of range"},
		{"--tls-sni-cert-key=only-a-cert.crt", "expected certfile,keyfile"},
	} {
		if err := startErr(t, tc.flag); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: start error %v, want it to contain %q", tc.flag, err, tc.want)
		}
	}
}

func readLeaf(t *testing.T, certFile string) *x509.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, strings.TrimSuffix(certFile, ".crt")+".key")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

// startErr is what capstan's flag checks say of args.
func startErr(t *testing.T, args ...string) error {
	t.Helper()
	o := app.NewOptions()
	fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.Complete()
	return o.Validate()
}
