package testkit

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WebhookKubeconfig writes, as dir/name, the kubeconfig a server's
// webhook configuration names (authentication and authorization webhooks,
// ImagePolicyWebhook): server reached over TLS trusting caPEM, with no
// client credentials. It returns the file's path.
func WebhookKubeconfig(t testing.TB, dir, name, server string, caPEM []byte) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hook"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["hook"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["hook"] = &clientcmdapi.Context{Cluster: "hook", AuthInfo: "hook"}
	cfg.CurrentContext = "hook"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// CertificatePEM is the PEM of a TLS test server's certificate, the CA a
// client of it trusts.
func CertificatePEM(s *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}
