package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/pki"
)

// frontProxyCA is a CA of front proxies' client certificates, apart from
// the server's client CA, as kubeadm sets one up.
type frontProxyCA struct {
	cert  *x509.Certificate
	key   *ecdsa.PrivateKey
	file  string
	bytes []byte
}

func newFrontProxyCA(t *testing.T) *frontProxyCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "front-proxy-ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := &frontProxyCA{cert: cert, key: key, file: filepath.Join(t.TempDir(), "front-proxy-ca.crt"), bytes: pemCert(cert.Raw)}
	if err := os.WriteFile(ca.file, ca.bytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return ca
}

// client returns the PEM certificate and key of a client CN=cn.
func (ca *frontProxyCA) client(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		t.Fatal(err)
	}
	return pemCert(der), keyPEM
}

// withHeaders sends headers with every request of cfg.
func withHeaders(cfg *rest.Config, headers http.Header) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			for k, vs := range headers {
				r.Header[k] = vs
			}
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func clientFor(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFrontProxy: --requestheader-* users authenticate through a front
// proxy's certificate and X-Remote-* headers; the headers of anyone else
// are ignored, a proxy not in --requestheader-allowed-names gets 401, and
// the extension-apiserver-authentication ConfigMap publishes it all as
// kube-apiserver does.
func TestFrontProxy(t *testing.T) {
	ca := newFrontProxyCA(t)
	s := testkit.StartServer(t, "--requestheader-client-ca-file", ca.file, "--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-", "--requestheader-uid-headers", "X-Remote-Uid")
	caFile := filepath.Join(s.DataDir, "pki", pki.CACertName)
	proxyCert, proxyKey := ca.client(t, "front-proxy-client")
	otherCert, otherKey := ca.client(t, "other-proxy")
	aliceHeaders := http.Header{"X-Remote-User": {"alice"}, "X-Remote-Uid": {"u-1"}, "X-Remote-Group": {"g1", "g2"},
		"X-Remote-Extra-Example.com%2fteam": {"blue"}}
	proxy := &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile, CertData: proxyCert, KeyData: proxyKey}}

	got, err := whoami(ctx(t), clientFor(t, withHeaders(proxy, aliceHeaders)))
	if err != nil {
		t.Fatal(err)
	}
	want := authenticationv1.UserInfo{Username: "alice", UID: "u-1", Groups: []string{"g1", "g2", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"example.com/team": {"blue"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("through the proxy: %+v, want %+v", got, want)
	}

	t.Run("headers without the proxy certificate are ignored", func(t *testing.T) {
		anon := &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}
		_, err := whoami(ctx(t), clientFor(t, withHeaders(anon, aliceHeaders)))
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "system:anonymous"`) {
			t.Errorf("anonymous with headers: want 403 as system:anonymous, got %v", err)
		}
		bob := newUser(t, s, "bob", "dev")
		got, err := whoami(ctx(t), clientFor(t, withHeaders(bob.config, aliceHeaders)))
		if err != nil || got.Username != "bob" || !slices.Equal(got.Groups, []string{"dev", "system:authenticated"}) {
			t.Errorf("client certificate with headers: %+v, %v; want bob", got, err)
		}
	})
	t.Run("proxy not in the allowed names", func(t *testing.T) {
		other := &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile, CertData: otherCert, KeyData: otherKey}}
		if _, err := whoami(ctx(t), clientFor(t, withHeaders(other, aliceHeaders))); !apierrors.IsUnauthorized(err) {
			t.Errorf("want 401, got %v", err)
		}
	})
	t.Run("proxy without a user header", func(t *testing.T) {
		// Like kube: the proxy's certificate is no client certificate of
		// the client CA, and no header names a user.
		if _, err := whoami(ctx(t), clientFor(t, proxy)); !apierrors.IsUnauthorized(err) {
			t.Errorf("want 401, got %v", err)
		}
	})
	t.Run("extension-apiserver-authentication", func(t *testing.T) {
		serverCA, err := os.ReadFile(caFile)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"client-ca-file":                     string(serverCA),
			"requestheader-client-ca-file":       string(ca.bytes),
			"requestheader-allowed-names":        `["front-proxy-client"]`,
			"requestheader-username-headers":     `["X-Remote-User"]`,
			"requestheader-uid-headers":          `["X-Remote-Uid"]`,
			"requestheader-group-headers":        `["X-Remote-Group"]`,
			"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
		}
		var got map[string]string
		eventually(t, "the ConfigMap", func(ctx context.Context) error {
			cm, err := s.Client(t).CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
			if err == nil {
				got = cm.Data
			}
			return err
		})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("data = %q\nwant %q", got, want)
		}
	}) // Last, as it replaces the proxy CA: the file is read again when it
	// changes, as kube-apiserver's dynamic CA bundle is.
	t.Run("a new CA in --requestheader-client-ca-file", func(t *testing.T) {
		ca2 := newFrontProxyCA(t)
		cert2, key2 := ca2.client(t, "front-proxy-client")
		proxy2 := &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile, CertData: cert2, KeyData: key2}}
		if _, err := whoami(ctx(t), clientFor(t, withHeaders(proxy2, aliceHeaders))); !apierrors.IsUnauthorized(err) {
			t.Fatalf("a proxy of a CA not in the file yet: want 401, got %v", err)
		}
		if err := os.WriteFile(ca.file, ca2.bytes, 0o600); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the new proxy CA trusted", func(ctx context.Context) error {
			got, err := whoami(ctx, clientFor(t, withHeaders(proxy2, aliceHeaders)))
			if err == nil && got.Username != "alice" {
				err = fmt.Errorf("user %q", got.Username)
			}
			return err
		})
		if _, err := whoami(ctx(t), clientFor(t, withHeaders(proxy, aliceHeaders))); !apierrors.IsUnauthorized(err) {
			t.Errorf("a proxy of the CA taken out of the file: want 401, got %v", err)
		}
	})
}
