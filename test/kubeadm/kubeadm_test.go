// Package kubeadm starts capstan with the kube-apiserver command line that
// kubeadm v1.37 writes into its static pod manifest (etcd over mutual TLS,
// the front proxy, service account keys, kubelet client certificates),
// unchanged, against an etcd that requires client certificates.
package kubeadm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/internal/testpki"
)

// kubeadmFlags are the flags kubeadm v1.37.2's getAPIServerCommand
// (cmd/kubeadm/app/phases/controlplane/manifests.go) writes for a control
// plane with a local etcd, with certificatesDir pki, the advertise address
// 127.0.0.1, kubeadm's default service subnet and DNS domain, and port.
func kubeadmFlags(pki string, port int, etcdServer string) []string {
	p := func(name string) string { return filepath.Join(pki, name) }
	return []string{
		"--advertise-address=127.0.0.1",
		"--allow-privileged=true",
		"--authorization-mode=Node,RBAC",
		"--client-ca-file=" + p("ca.crt"),
		"--enable-admission-plugins=NodeRestriction",
		"--enable-bootstrap-token-auth=true",
		"--etcd-cafile=" + p("etcd/ca.crt"),
		"--etcd-certfile=" + p("apiserver-etcd-client.crt"),
		"--etcd-keyfile=" + p("apiserver-etcd-client.key"),
		"--etcd-servers=" + etcdServer,
		"--kubelet-client-certificate=" + p("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + p("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--proxy-client-cert-file=" + p("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p("front-proxy-client.key"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-client-ca-file=" + p("front-proxy-ca.crt"),
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		fmt.Sprintf("--secure-port=%d", port),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p("sa.pub"),
		"--service-account-signing-key-file=" + p("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/12",
		"--tls-cert-file=" + p("apiserver.crt"),
		"--tls-private-key-file=" + p("apiserver.key"),
	}
}

// kubeadmPKI writes the certificates and keys kubeadm's certs phase makes,
// by kubeadm's file names, and an admin client certificate.
func kubeadmPKI(t *testing.T, pki string) {
	ca := testpki.NewCA(t, pki, "ca")
	ca.Issue(t, pki, "apiserver", testpki.Leaf{CN: "kube-apiserver", Server: true})
	ca.Issue(t, pki, "apiserver-kubelet-client", testpki.Leaf{CN: "kube-apiserver-kubelet-client", Orgs: []string{"kubeadm:cluster-admins"}, Client: true})
	ca.Issue(t, pki, "admin", testpki.Leaf{CN: "kubernetes-admin", Orgs: []string{"system:masters"}, Client: true})
	fp := testpki.NewCA(t, pki, "front-proxy-ca")
	fp.Issue(t, pki, "front-proxy-client", testpki.Leaf{CN: "front-proxy-client", Client: true})
	etcdCA := testpki.NewCA(t, filepath.Join(pki, "etcd"), "ca")
	etcdCA.Issue(t, filepath.Join(pki, "etcd"), "server", testpki.Leaf{CN: "etcd-server", Server: true, Client: true})
	etcdCA.Issue(t, pki, "apiserver-etcd-client", testpki.Leaf{CN: "kube-apiserver-etcd-client", Client: true})
	testpki.ServiceAccountKeys(t, pki)
}

func TestKubeadmFlags(t *testing.T) {
	dir := t.TempDir()
	pki := filepath.Join(dir, "pki")
	kubeadmPKI(t, pki)
	etcdURL := startTLSEtcd(t, dir, pki)

	port := testkit.FreePort(t)
	// kubeadm's flags, and the loopback address to bind to (kubeadm leaves
	// kube's default, every address).
	flags := append(kubeadmFlags(pki, port, etcdURL), "--bind-address=127.0.0.1")
	cwd, _ := os.Getwd()
	startCapstan(t, flags)
	if _, err := os.Stat(filepath.Join(cwd, "capstan-data")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("capstan made its default --data-dir though etcd and every certificate were given: %v", err)
	}

	host := fmt.Sprintf("https://127.0.0.1:%d", port)
	admin := &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{
		CAFile: filepath.Join(pki, "ca.crt"), CertFile: filepath.Join(pki, "admin.crt"), KeyFile: filepath.Join(pki, "admin.key")}}
	client := kubernetes.NewForConfigOrDie(admin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubeadm"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a write through etcd over mutual TLS: %v", err)
	}

	// The front proxy's client certificate and headers name the user, as
	// the aggregation layer sends them.
	proxied := &rest.Config{Host: host, TLSClientConfig: rest.TLSClientConfig{
		CAFile: filepath.Join(pki, "ca.crt"), CertFile: filepath.Join(pki, "front-proxy-client.crt"), KeyFile: filepath.Join(pki, "front-proxy-client.key")},
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
				r = r.Clone(r.Context())
				r.Header.Set("X-Remote-User", "alice")
				r.Header.Set("X-Remote-Group", "devs")
				return rt.RoundTrip(r)
			})
		}}
	review, err := kubernetes.NewForConfigOrDie(proxied).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("whoami through the front proxy: %v", err)
	}
	if u := review.Status.UserInfo; u.Username != "alice" || !contains(u.Groups, "devs") {
		t.Errorf("through the front proxy: %+v, want alice in devs", u)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// startTLSEtcd runs `capstan etcd` in-process as kubeadm runs etcd: client
// URLs over TLS with client certificates required, signed by pki/etcd/ca.
// It returns the client URL once /health answers a client with a
// certificate, and checks that one without a certificate is refused.
func startTLSEtcd(t *testing.T, dir, pki string) string {
	t.Helper()
	etcdURL := fmt.Sprintf("https://127.0.0.1:%d", testkit.FreePort(t))
	p := func(name string) string { return filepath.Join(pki, "etcd", name) }
	args := []string{
		"--data-dir=" + filepath.Join(dir, "etcd"), "--unsafe-no-fsync", "--log-level=panic",
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", testkit.FreePort(t)),
		"--client-cert-auth=true", "--trusted-ca-file=" + p("ca.crt"), "--cert-file=" + p("server.crt"), "--key-file=" + p("server.key"),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.RunEtcd(ctx, args, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("etcd: %v", err)
		}
	})
	withCert, err := tls.LoadX509KeyPair(filepath.Join(pki, "apiserver-etcd-client.crt"), filepath.Join(pki, "apiserver-etcd-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	caPEM, err := os.ReadFile(p("ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots.AppendCertsFromPEM(caPEM)
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
	}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		resp, err := client(withCert).Get(etcdURL + "/health")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("etcd over TLS: %v", err)
	}
	if resp, err := client().Get(etcdURL + "/health"); err == nil {
		resp.Body.Close()
		t.Fatal("etcd answered a client without a certificate")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Logf("a client without a certificate: %v", err)
	}
	return etcdURL
}

// startCapstan runs capstan in-process with flags until the test ends.
func startCapstan(t *testing.T, flags []string) {
	t.Helper()
	o := app.NewOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(flags); err != nil {
		t.Fatalf("kubeadm's flags: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{}, 1)
	go func() { done <- app.Run(ctx, o, io.Discard, func(*app.Process) { ready <- struct{}{} }) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("capstan did not start with kubeadm's flags: %v", err)
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("capstan did not start within a minute")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("capstan: %v", err)
		}
	})
}
