package pki

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// serveTLS serves, over TLS with c's certificate, a handler that echoes the
// verified client certificate's subject. It returns the port.
func serveTLS(t *testing.T, c ServingCerts) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		TLSConfig: &tls.Config{
			GetCertificate: c.GetCertificate,
			ClientAuth:     tls.RequireAndVerifyClientCert,
			ClientCAs:      c.ClientCAs,
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s := r.TLS.PeerCertificates[0].Subject
			fmt.Fprintf(w, "%s %s", s.CommonName, strings.Join(s.Organization, ","))
		}),
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func TestAdminKubeconfigTalksToServer(t *testing.T) {
	c := mustEnsure(t, ServingOptions{DataDir: t.TempDir(), Hostname: "node-1"})
	port := serveTLS(t, c)

	for _, host := range []string{"127.0.0.1", "localhost"} {
		t.Run(host, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubeconfig")
			if err := c.WriteAdminKubeconfig(path, "https://"+host+":"+port); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("kubeconfig stat = %v, %v; want mode 600", fi, err)
			}
			got := getWithKubeconfig(t, path)
			if got != "admin system:masters" {
				t.Errorf("server saw client %q, want %q", got, "admin system:masters")
			}
		})
	}
}

func getWithKubeconfig(t *testing.T, path string) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != "capstan" || raw.Contexts["capstan"].Cluster != "capstan" || raw.Contexts["capstan"].AuthInfo != "capstan" {
		t.Errorf("names in kubeconfig: %+v", raw)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(cfg.Host + "/")
	if err != nil {
		t.Fatalf("GET with kubeconfig: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

func TestWriteKubeconfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path, server, context string
		wantName, wantErr           string
	}{
		{name: "default names", path: filepath.Join(dir, "a"), server: "https://127.0.0.1:6443", wantName: "capstan"},
		{name: "named context", path: filepath.Join(dir, "sub", "b"), server: "https://h:1", context: "dev", wantName: "dev"},
		{name: "no server", path: filepath.Join(dir, "c"), wantErr: "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteKubeconfig(tt.path, tt.server, []byte("ca"), []byte("cert"), []byte("key"), tt.context)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := clientcmd.LoadFromFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			cl, user := cfg.Clusters[tt.wantName], cfg.AuthInfos[tt.wantName]
			if cfg.CurrentContext != tt.wantName || cl == nil || user == nil ||
				cl.Server != tt.server || string(cl.CertificateAuthorityData) != "ca" ||
				string(user.ClientCertificateData) != "cert" || string(user.ClientKeyData) != "key" {
				t.Errorf("kubeconfig = %+v", cfg)
			}
		})
	}
}

func TestWriteAdminKubeconfigNeedsGenerated(t *testing.T) {
	certFile, keyFile := foreignPair(t, t.TempDir())
	c := mustEnsure(t, ServingOptions{TLSCertFile: certFile, TLSPrivateKeyFile: keyFile})
	if err := c.WriteAdminKubeconfig(filepath.Join(t.TempDir(), "k"), "https://x"); err == nil {
		t.Error("want an error without generated certificates")
	}
}
