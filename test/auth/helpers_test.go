// Package auth tests authorization end to end: users with client
// certificates signed by the server's CA, RBAC, the escalation checks, the
// bootstrap policy and kubectl auth can-i.
package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/pki"
)

// user is a client of the test server with its own certificate.
type user struct {
	name       string
	kubeconfig string
	config     *rest.Config
	client     kubernetes.Interface
}

// newUser mints a client certificate for CN=name, O=groups, signed by the
// CA capstan generated in its data dir, and writes a kubeconfig for it.
func newUser(t *testing.T, s *testkit.Server, name string, groups ...string) *user {
	t.Helper()
	caCert, caKey := loadCA(t, filepath.Join(s.DataDir, "pki"))
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: name, Organization: groups},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(s.DataDir, "pki", pki.CACertName))
	if err != nil {
		t.Fatal(err)
	}
	u := &user{name: name, kubeconfig: filepath.Join(t.TempDir(), name+".kubeconfig")}
	certPEM := pemCert(der)
	if err := pki.WriteKubeconfig(u.kubeconfig, s.URL, caPEM, certPEM, keyPEM, name); err != nil {
		t.Fatal(err)
	}
	if u.config, err = clientcmd.BuildConfigFromFlags("", u.kubeconfig); err != nil {
		t.Fatal(err)
	}
	if u.client, err = kubernetes.NewForConfig(u.config); err != nil {
		t.Fatal(err)
	}
	return u
}

func loadCA(t *testing.T, dir string) (*x509.Certificate, any) {
	t.Helper()
	certs, err := certutil.CertsFromFile(filepath.Join(dir, pki.CACertName))
	if err != nil {
		t.Fatal(err)
	}
	key, err := keyutil.PrivateKeyFromFile(filepath.Join(dir, pki.CAKeyName))
	if err != nil {
		t.Fatal(err)
	}
	return certs[0], key
}

func pemCert(der []byte) []byte {
	out, err := certutil.EncodeCertificates(&x509.Certificate{Raw: der})
	if err != nil {
		panic(err)
	}
	return out
}

// ctx bounds a test's requests.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// eventually polls cond until it returns nil: RBAC changes reach the
// authorizer through informers, a moment after the write.
func eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx(t), 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %v)", what, err, last)
	}
}
