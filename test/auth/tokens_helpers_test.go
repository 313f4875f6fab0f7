package auth

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/pki"
)

// tokenConfig is a client config of s that sends token and no client
// certificate.
func tokenConfig(t *testing.T, s *testkit.Server, token string) *rest.Config {
	t.Helper()
	return &rest.Config{Host: s.URL, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(s.DataDir, "pki", pki.CACertName)}}
}

// tokenClient is a clientset of s that authenticates with token.
func tokenClient(t *testing.T, s *testkit.Server, token string) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(tokenConfig(t, s, token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tokenKubeconfig writes a kubeconfig of s that authenticates with token.
func tokenKubeconfig(t *testing.T, s *testkit.Server, token string) string {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(s.DataDir, "pki", pki.CACertName))
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["capstan"] = &clientcmdapi.Cluster{Server: s.URL, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["token"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["token"] = &clientcmdapi.Context{Cluster: "capstan", AuthInfo: "token"}
	cfg.CurrentContext = "token"
	path := filepath.Join(t.TempDir(), "token.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
