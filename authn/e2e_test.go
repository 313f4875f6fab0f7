package authn_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/pki"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestClientCertificatesOverTLS serves the chain kube-apiserver builds
// (certificates, then anonymous) with capstan's generated certificates and
// calls it with client-go as the admin, as nobody, and as a stranger.
func TestClientCertificatesOverTLS(t *testing.T) {
	certs, err := pki.EnsureServing(pki.ServingOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := pki.EnsureServing(pki.ServingOptions{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	verify := func() x509.VerifyOptions { return x509.VerifyOptions{Roots: certs.ClientCAs} }
	auth := authn.UnionFailOnError(authn.Union(authn.NewX509(verify)), authn.NewAnonymous())
	url := serve(t, certs, auth)

	tests := []struct {
		name   string
		certs  pki.ServingCerts // whose admin certificate the client presents
		noCert bool
		want   string
	}{
		{name: "admin", certs: certs, want: "200 admin [system:masters system:authenticated]"},
		{name: "no certificate", noCert: true, want: "200 system:anonymous [system:unauthenticated]"},
		{name: "certificate of another CA", certs: stranger, want: "401 verifying certificate SN="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
			if err := certs.WriteAdminKubeconfig(kubeconfig, url); err != nil {
				t.Fatal(err)
			}
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			cfg.CertFile, cfg.KeyFile = tt.certs.AdminCertFile, tt.certs.AdminKeyFile
			cfg.CertData, cfg.KeyData = nil, nil
			if tt.noCert {
				cfg.CertFile, cfg.KeyFile = "", ""
			}
			if got := get(t, cfg); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q...", got, tt.want)
			}
		})
	}
}

func serve(t *testing.T, certs pki.ServingCerts, auth authn.Authenticator) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		TLSConfig: &tls.Config{GetCertificate: certs.GetCertificate, ClientAuth: tls.RequestClientCert},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			resp, ok, err := auth.AuthenticateRequest(r)
			if err != nil || !ok {
				http.Error(w, fmt.Sprint(err), http.StatusUnauthorized)
				return
			}
			r = r.WithContext(authn.WithUser(r.Context(), resp.User))
			u, _ := authn.UserFrom(r.Context())
			fmt.Fprintf(w, "%s %v", u.Name, u.Groups)
		}),
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String()
}

func get(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(cfg.Host + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, body)
}
