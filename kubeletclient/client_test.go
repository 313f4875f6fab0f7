package kubeletclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// nodes is a NodeGetter over fixed nodes; a missing one is NotFound, as
// the node storage answers.
type nodes map[string]*corev1.Node

func (n nodes) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	if node, ok := n[name]; ok {
		return node, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, name)
}

func node(name string, port int32, addrs ...corev1.NodeAddress) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Addresses = addrs
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = port
	return n
}

var (
	internal  = corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}
	internal2 = corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}
	external  = corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.1"}
	hostname  = corev1.NodeAddress{Type: corev1.NodeHostName, Address: "node-a"}
	v6        = corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "fd00::1"}
)

func TestPreferredAddress(t *testing.T) {
	types := []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalIP, corev1.NodeExternalIP}
	for _, tc := range []struct {
		name  string
		addrs []corev1.NodeAddress
		types []corev1.NodeAddressType
		want  string // "" for no match
	}{
		{"first preferred type wins over address order", []corev1.NodeAddress{external, internal, hostname}, types, "node-a"},
		{"first address of the type", []corev1.NodeAddress{external, internal2, internal}, types, "10.0.0.2"},
		{"falls through the types", []corev1.NodeAddress{external}, types, "203.0.113.1"},
		{"no address of a preferred type", []corev1.NodeAddress{external}, []corev1.NodeAddressType{corev1.NodeInternalIP}, ""},
		{"no preferred types", []corev1.NodeAddress{internal}, nil, ""},
	} {
		got, err := PreferredAddress(node("n", 0, tc.addrs...), tc.types)
		switch {
		case tc.want == "" && !IsNoMatch(err):
			t.Errorf("%s: %q, %v; want a NoMatchError", tc.name, got, err)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	_, err := PreferredAddress(node("n", 0, external), []corev1.NodeAddressType{corev1.NodeInternalIP})
	if want := "no preferred addresses found; known addresses: [{ExternalIP 203.0.113.1}]"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if !IsNoMatch(errors.Join(errors.New("dialling"), err)) || IsNoMatch(errors.New("no preferred addresses found")) {
		t.Error("IsNoMatch does not follow wrapping, or matches by text")
	}
}

func TestConnect(t *testing.T) {
	c, err := New(Config{Port: 10250, PreferredAddressTypes: []string{"InternalIP", "ExternalIP"}})
	if err != nil {
		t.Fatal(err)
	}
	withFeatures := node("feat", 0, internal)
	withFeatures.Status.DeclaredFeatures = []string{"A", "B"}
	nodes := nodes{"reported": node("reported", 11250, external, internal), "unreported": node("unreported", 0, internal),
		"v6": node("v6", 10255, v6), "hostname-only": node("hostname-only", 0, hostname), "feat": withFeatures}

	for _, tc := range []struct {
		node, host, hostname string
		features             []string
	}{
		{"reported", "10.0.0.1:11250", "10.0.0.1", nil},
		{"unreported", "10.0.0.1:10250", "10.0.0.1", nil},
		{"v6", "[fd00::1]:10255", "fd00::1", nil},
		{"feat", "10.0.0.1:10250", "10.0.0.1", []string{"A", "B"}},
	} {
		conn, err := c.Connect(context.Background(), nodes, tc.node, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.node, err)
		}
		if conn.Host != tc.host || conn.Hostname != tc.hostname || strings.Join(conn.Features, ",") != strings.Join(tc.features, ",") {
			t.Errorf("%s: host %q, hostname %q, features %q; want %q, %q, %q", tc.node, conn.Host, conn.Hostname, conn.Features, tc.host, tc.hostname, tc.features)
		}
		if conn.Transport != c.secure.ordinary || conn.UpgradeTransport != c.secure.upgrade {
			t.Errorf("%s: not the verifying transports", tc.node)
		}
	}
	conn, err := c.Connect(context.Background(), nodes, "reported", true)
	if err != nil || conn.Transport != c.insecure.ordinary || conn.UpgradeTransport != c.insecure.upgrade {
		t.Errorf("insecureSkipVerify: %v, transports are not the ones that skip verification", err)
	}
	if _, err := c.Connect(context.Background(), nodes, "hostname-only", false); !IsNoMatch(err) {
		t.Errorf("a node without a preferred address: %v", err)
	}
	if _, err := c.Connect(context.Background(), nodes, "missing", false); !apierrors.IsNotFound(err) {
		t.Errorf("a missing node: %v, want its NotFound as it is", err)
	}
}

func TestConnectionURL(t *testing.T) {
	conn := &Connection{Host: "[fd00::1]:10250"}
	for _, tc := range []struct {
		path  string
		query url.Values
		want  string
	}{
		{"/containerLogs/ns/pod/c", url.Values{"follow": {"true"}, "tailLines": {"10"}}, "https://[fd00::1]:10250/containerLogs/ns/pod/c?follow=true&tailLines=10"},
		{"/exec/ns/pod/c", url.Values{"command": {"sh", "-c", "echo a&b"}}, "https://[fd00::1]:10250/exec/ns/pod/c?command=sh&command=-c&command=echo+a%26b"},
		{"/logs/dir name/", nil, "https://[fd00::1]:10250/logs/dir%20name/"},
	} {
		if got := conn.URL(tc.path, tc.query).String(); got != tc.want {
			t.Errorf("URL(%q, %v) = %s, want %s", tc.path, tc.query, got, tc.want)
		}
	}
}

// TestTLS: the client certificate reaches the kubelet; the kubelet's
// certificate is verified against the CA when there is one, and never
// when the request skips verification or no CA is configured.
func TestTLS(t *testing.T) {
	var mu sync.Mutex
	var peers []string
	kubelet := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range r.TLS.PeerCertificates {
			peers = append(peers, c.Subject.CommonName)
		}
	}))
	kubelet.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	kubelet.StartTLS()
	defer kubelet.Close()
	addr := kubelet.Listener.Addr().(*net.TCPAddr)

	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clientCert, clientKey := selfSigned(t, "kube-apiserver-kubelet-client")
	certFile, keyFile := write("client.crt", clientCert), write("client.key", clientKey)
	kubeletCA := write("kubelet-ca.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kubelet.Certificate().Raw}))
	otherCert, _ := selfSigned(t, "other-ca")
	otherCA := write("other-ca.crt", otherCert)

	n := nodes{"n": node("n", 0, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: addr.IP.String()})}
	for _, tc := range []struct {
		name     string
		caFile   string
		insecure bool
		ok       bool
	}{
		{"the kubelet's CA", kubeletCA, false, true},
		{"another CA", otherCA, false, false},
		{"another CA, verification skipped", otherCA, true, true},
		{"no CA", "", false, true},
	} {
		c, err := New(Config{Port: uint(addr.Port), PreferredAddressTypes: []string{"InternalIP"}, CertFile: certFile, KeyFile: keyFile, CAFile: tc.caFile})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := c.Connect(context.Background(), n, "n", tc.insecure)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		peers = nil
		mu.Unlock()
		resp, err := (&http.Client{Transport: conn.Transport}).Get(conn.URL("/healthz", nil).String())
		if err == nil {
			resp.Body.Close()
		}
		var unknownAuthority x509.UnknownAuthorityError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && !errors.As(err, &unknownAuthority):
			t.Errorf("%s: %v, want the kubelet's certificate refused", tc.name, err)
		}
		mu.Lock()
		if tc.ok && strings.Join(peers, ",") != "kube-apiserver-kubelet-client" {
			t.Errorf("%s: the kubelet saw client certificates %q", tc.name, peers)
		}
		mu.Unlock()
	}
}

func TestNewRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.crt")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"CA without certificates", Config{CAFile: empty}, "kubelet certificate authority: no certificates in " + empty},
		{"missing CA", Config{CAFile: filepath.Join(dir, "none.crt")}, "kubelet certificate authority: open " + filepath.Join(dir, "none.crt") + ": no such file or directory"},
		{"certificate without key", Config{CertFile: empty}, "kubelet client certificate: open : no such file or directory"},
	} {
		if _, err := New(tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestDial: every connection, to kubelets and to the cluster network,
// goes through Config.Dial.
func TestDial(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer backend.Close()
	var mu sync.Mutex
	var dialled []string
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, network, backend.Listener.Addr().String())
	}
	c, err := New(Config{Port: 10250, PreferredAddressTypes: []string{"InternalIP"}, Dial: dial, Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ordinary, _ := c.Cluster()
	resp, err := (&http.Client{Transport: ordinary}).Get("http://10.96.0.10:8080/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	conn, err := c.Connect(context.Background(), nodes{"n": node("n", 0, internal)}, "n", true)
	if err != nil {
		t.Fatal(err)
	}
	// The backend speaks plain HTTP: the TLS handshake fails, after the dial.
	if resp, err := (&http.Client{Transport: conn.Transport}).Get(conn.URL("/healthz", nil).String()); err == nil {
		resp.Body.Close()
		t.Error("plain HTTP passed for a kubelet's TLS")
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(dialled, ",") != "10.96.0.10:8080,10.0.0.1:10250" {
		t.Errorf("dialled %q", dialled)
	}
	if got := conn.Transport.(*http.Transport).TLSHandshakeTimeout; got != 3*time.Second {
		t.Errorf("TLS handshake timeout %v, want --kubelet-timeout's 3s", got)
	}
}

// selfSigned returns a self-signed certificate and its key, PEM-encoded.
func selfSigned(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
