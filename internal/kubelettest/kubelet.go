// Package kubelettest is a kubelet's API for tests, on loopback HTTPS: the
// containerLogs, exec, attach and portForward endpoints the API server's
// node-facing subresources reach, speaking the real streaming protocols
// (SPDY remote command v1-v5 and port forwarding). Containers are
// directories: exec runs the command on the test machine in its pod's
// directory, attach echoes stdin to stdout as a `cat` would, and a
// forwarded port is the same port on 127.0.0.1.
package kubelettest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kubelet is a running test kubelet.
type Kubelet struct {
	// URL is its https base URL; Port its port on 127.0.0.1.
	URL  string
	Port int
	// CAFile verifies its serving certificate (--kubelet-certificate-authority);
	// ClientCertFile and ClientKeyFile are a client certificate it accepts
	// (--kubelet-client-certificate, --kubelet-client-key).
	CAFile, ClientCertFile, ClientKeyFile string
	// Root holds a directory per pod, where exec runs commands.
	Root string

	srv     *httptest.Server
	ctx     context.Context
	mu      sync.Mutex // guards the fields below
	logs    map[string]*containerLog
	seen    []string
	resizes []TerminalSize
}

// Start runs a test kubelet until the test ends. It requires a client
// certificate signed by its CA.
func Start(t testing.TB) *Kubelet {
	t.Helper()
	dir := t.TempDir()
	c, err := newCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &Kubelet{CAFile: c.caFile, ClientCertFile: c.clientCert, ClientKeyFile: c.clientKey,
		Root: filepath.Join(dir, "pods"), ctx: ctx, logs: map[string]*containerLog{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", k.serveLogs)
	mux.HandleFunc("/exec/{ns}/{pod}/{container}", k.serveExec)
	mux.HandleFunc("/attach/{ns}/{pod}/{container}", k.serveAttach)
	mux.HandleFunc("/portForward/{ns}/{pod}", k.servePortForward)
	mux.HandleFunc("GET /logs/{$}", serveLogsIndex)
	mux.HandleFunc("/echo/", serveEcho)
	k.srv = httptest.NewUnstartedServer(k.record(mux))
	k.srv.TLS = &tls.Config{Certificates: []tls.Certificate{c.serving}, ClientCAs: c.pool, ClientAuth: tls.RequireAndVerifyClientCert}
	k.srv.StartTLS()
	// Streams end with the test: a follow or an attach would wait for more.
	t.Cleanup(func() {
		cancel()
		k.srv.CloseClientConnections()
		k.srv.Close()
	})
	k.URL = k.srv.URL
	_, port, _ := net.SplitHostPort(k.srv.Listener.Addr().String())
	k.Port, _ = strconv.Atoi(port)
	return k
}

// record notes each request's method, path and query.
func (k *Kubelet) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.seen = append(k.seen, r.Method+" "+r.URL.RequestURI())
		k.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// Requests are the requests served so far, as "METHOD /path?query".
func (k *Kubelet) Requests() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.seen...)
}

// Node is a Node whose kubelet this is: its InternalIP 127.0.0.1 and its
// kubelet port.
func (k *Kubelet) Node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: "localhost"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(k.Port)}},
	}}
}

// RoutedNode is a Node whose kubelet this is at NodeIP, an address
// ClusterDial routes here, which the proxy subresources may reach.
func (k *Kubelet) RoutedNode(name string) *corev1.Node {
	n := k.Node(name)
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: NodeIP}}
	return n
}

// PodDir is the directory of a pod's containers, made on first use.
func (k *Kubelet) PodDir(ns, pod string) (string, error) {
	dir := filepath.Join(k.Root, ns, pod)
	return dir, os.MkdirAll(dir, 0o700)
}

func containerKey(ns, pod, container string) string {
	return strings.Join([]string{ns, pod, container}, "/")
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	http.Error(w, fmt.Sprintf(format, args...), code)
}
