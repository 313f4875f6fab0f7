package kubelet

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	gwebsocket "github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/kubelettest"
	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/testserver"
)

// backendIP is the test pod's IP: TEST-NET-1, which kubelettest.ClusterDial
// routes to 127.0.0.1.
const backendIP = "192.0.2.20"

// proxyEnv is a server on a test cluster network: node-1 is a test kubelet
// at kubelettest.NodeIP, the pod "backend" (at backendIP) is a plain HTTP
// server, and the Service "web" (port 80, "http") leads to it.
type proxyEnv struct {
	*kubeletEnv
	port int // the backend's
	hc   *http.Client
}

func startProxy(t *testing.T) *proxyEnv {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(serveBackend))
	t.Cleanup(backend.Close)
	_, p, _ := net.SplitHostPort(backend.Listener.Addr().String())
	port, _ := strconv.Atoi(p)
	k := kubelettest.Start(t)
	s := testkit.StartServerWith(t, testserver.WithClusterDialer(kubelettest.ClusterDial), testserver.WithFlags(
		"--controllers=*,-root-ca-cert-publisher",
		"--kubelet-client-certificate", k.ClientCertFile, "--kubelet-client-key", k.ClientKeyFile, "--kubelet-certificate-authority", k.CAFile))
	e := &e2eutil.Env{Server: s, Clientset: s.Client(t)}
	pe := &proxyEnv{kubeletEnv: &kubeletEnv{Env: e, k: k, ns: e.Namespace(t)}, port: port, hc: e.HTTPClient(t)}
	pe.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	pe.node(t, k.RoutedNode("node-1"))
	pe.node(t, k.Node("loopback-node"))
	pe.podAt(t, "backend", backendIP, port)
	pe.podAt(t, "loopback", "127.0.0.5", port)
	pe.podAt(t, "metadata", "169.254.169.254", 80)
	pe.service(t, "web", map[string]string{backendIP: "backend"})
	// A slice that names a pod whose IP is not the endpoint's.
	pe.service(t, "stray", map[string]string{"192.0.2.30": "backend"})
	return pe
}

// serveBackend is the pod's server: /echo/ answers with the request,
// /page an HTML page with links, /redirect a redirect, /stream a line and
// then nothing until the client goes away.
func serveBackend(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/ws":
		upgrader := gwebsocket.Upgrader{}
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		if kind, msg, err := c.ReadMessage(); err == nil {
			_ = c.WriteMessage(kind, append([]byte("echo: "), msg...))
		}
	case r.URL.Path == "/refuse":
		http.Error(w, "no upgrade here", http.StatusForbidden)
	case r.URL.Path == "/stream":
		fmt.Fprintln(w, "first")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case r.URL.Path == "/redirect":
		http.Redirect(w, r, "/target", http.StatusFound)
	case r.URL.Path == "/page" || r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="/docs/">docs</a><img src="logo.png"><a href="http://example.com/x">out</a><form action="/send"></form>`)
	default:
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(kubelettest.Echo{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Host: r.Host,
			Body: string(body), Header: r.Header})
	}
}

func (pe *proxyEnv) podAt(t *testing.T, name, ip string, port int) {
	t.Helper()
	pod, err := pe.Clientset.CoreV1().Pods(pe.ns).Create(e2eutil.Ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		NodeName: "node-1", Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Ports: []corev1.ContainerPort{{ContainerPort: int32(port)}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP, pod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	if _, err := pe.Clientset.CoreV1().Pods(pe.ns).UpdateStatus(e2eutil.Ctx(t), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// service makes a Service of port 80 ("http") to the backend's port and
// an EndpointSlice of the given IPs, each naming a pod.
func (pe *proxyEnv) service(t *testing.T, name string, endpoints map[string]string) {
	t.Helper()
	if _, err := pe.Clientset.CoreV1().Services(pe.ns).Create(e2eutil.Ctx(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt(pe.port)}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(pe.port))}}}
	for ip, pod := range endpoints {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pe.ns, Name: pod}})
	}
	if _, err := pe.Clientset.DiscoveryV1().EndpointSlices(pe.ns).Create(e2eutil.Ctx(t), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (pe *proxyEnv) call(t *testing.T, method, path, body string) e2eutil.Response {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	return e2eutil.DoWith(t, pe.hc, method, pe.URL+path, b)
}

// echo calls path and decodes the backend's echo.
func (pe *proxyEnv) echo(t *testing.T, method, path, body string) kubelettest.Echo {
	t.Helper()
	r := pe.call(t, method, path, body)
	var e kubelettest.Echo
	if r.Code != http.StatusOK || json.Unmarshal(r.Body, &e) != nil {
		t.Fatalf("%s %s = %d %s", method, path, r.Code, r.Body)
	}
	return e
}

// TestPodProxy: pods/proxy reaches the pod's IP at the port named or its
// first container port, with every method, the query and the trailing
// slash passed on, the client's credentials not, and kube's rewriting of
// redirects and HTML links; the bare root is redirected.
func TestPodProxy(t *testing.T) {
	pe := startProxy(t)
	base := "/api/v1/namespaces/" + pe.ns + "/pods/"
	for _, id := range []string{"backend", "backend:" + strconv.Itoa(pe.port), "http:backend:" + strconv.Itoa(pe.port)} {
		got := pe.echo(t, http.MethodGet, base+id+"/proxy/echo/a?x=1&y=2", "")
		if got.Path != "/echo/a" || got.Query != "x=1&y=2" || got.Method != http.MethodGet {
			t.Errorf("%s: backend saw %+v", id, got)
		}
		if got.Header.Get("X-Forwarded-Uri") != base+id+"/proxy/echo/a" || got.Header.Get("Authorization") != "" {
			t.Errorf("%s: backend's headers %v", id, got.Header)
		}
		if host := strings.TrimPrefix(pe.URL, "https://"); got.Host != host {
			t.Errorf("%s: backend saw Host %q, want the server's %q", id, got.Host, host)
		}
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		got := pe.echo(t, method, base+"backend/proxy/echo/", `{"a":1}`)
		if got.Method != method || got.Path != "/echo/" || got.Body != `{"a":1}` {
			t.Errorf("%s: backend saw %+v", method, got)
		}
	}
	if r := pe.call(t, http.MethodHead, base+"backend/proxy/echo/", ""); r.Code != http.StatusOK {
		t.Errorf("HEAD = %d", r.Code)
	}

	r := pe.call(t, http.MethodGet, base+"backend/proxy?q=1", "")
	if r.Code != http.StatusMovedPermanently || r.Header.Get("Location") != base+"backend/proxy/?q=1" {
		t.Errorf("bare root = %d, Location %q", r.Code, r.Header.Get("Location"))
	}
	r = pe.call(t, http.MethodGet, base+"backend/proxy/redirect", "")
	if r.Code != http.StatusFound || r.Header.Get("Location") != base+"backend/proxy/target" {
		t.Errorf("redirect = %d, Location %q (want it rewritten, not followed)", r.Code, r.Header.Get("Location"))
	}
	r = pe.call(t, http.MethodGet, base+"backend/proxy/page", "")
	want := `<a href="` + base + `backend/proxy/docs/">docs</a><img src="logo.png"><a href="http://example.com/x">out</a><form action="` + base + `backend/proxy/send"></form>`
	if r.Code != http.StatusOK || string(r.Body) != want {
		t.Errorf("page = %d\n%s\nwant\n%s", r.Code, r.Body, want)
	}
}

// TestPodProxyUpgrade: a WebSocket through pods/proxy reaches the pod
// once it accepted; an upgrade the pod refuses ends with its answer on a
// connection that is closed after it.
func TestPodProxyUpgrade(t *testing.T) {
	pe := startProxy(t)
	tlsConfig, err := rest.TLSConfigFor(pe.Config)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(pe.URL, "https://", "wss://", 1) + "/api/v1/namespaces/" + pe.ns + "/pods/backend/proxy/"
	d := gwebsocket.Dialer{TLSClientConfig: tlsConfig, HandshakeTimeout: 30 * time.Second}
	conn, _, err := d.DialContext(e2eutil.Ctx(t), base+"ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.WriteMessage(gwebsocket.TextMessage, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := conn.ReadMessage(); err != nil || string(msg) != "echo: hi" {
		t.Fatalf("through the proxy: %q, %v", msg, err)
	}
	// A backend that refuses: its answer, then the connection closes.
	_, res, err := d.DialContext(e2eutil.Ctx(t), base+"refuse", nil)
	if err == nil || res == nil {
		t.Fatalf("an upgrade the pod refused: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || string(body) != "no upgrade here\n" || !res.Close {
		t.Errorf("an upgrade the pod refused: %d %q, close %v", res.StatusCode, body, res.Close)
	}
	// A backend that answers as if no upgrade was asked for: kube's error.
	_, res, err = d.DialContext(e2eutil.Ctx(t), base+"echo/", nil)
	if err == nil || res == nil {
		t.Fatalf("an upgrade the pod ignored: %v", err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "invalid upgrade response: status code 200") {
		t.Errorf("an upgrade the pod ignored: %d %s", res.StatusCode, body)
	}
}

// TestPodProxyRefused: kube's errors for a malformed name, a missing pod,
// and pod IPs the proxy must not reach (loopback, link-local: a pod's
// status must not open the server's own machine).
func TestPodProxyRefused(t *testing.T) {
	pe := startProxy(t)
	base := "/api/v1/namespaces/" + pe.ns + "/pods/"
	for _, c := range []struct {
		path    string
		code    int
		message string
	}{
		{"a:b:c:d/proxy/", 400, `invalid pod request "a:b:c:d"`},
		{"ftp:backend:80/proxy/", 400, `invalid pod request "ftp:backend:80"`},
		{"missing/proxy/", 404, `pods "missing" not found`},
		{"loopback/proxy/", 400, "address not allowed"},
		{"metadata/proxy/latest", 400, "address not allowed"},
	} {
		r := pe.call(t, http.MethodGet, base+c.path, "")
		if s := r.Status(t); r.Code != c.code || s.Message != c.message {
			t.Errorf("%s = %d %q, want %d %q", c.path, r.Code, s.Message, c.code, c.message)
		}
	}
}

// TestServiceProxy: services/proxy reaches a ready endpoint that is a
// pod's IP, by port number, name or scheme; kubectl get --raw takes the
// same paths.
func TestServiceProxy(t *testing.T) {
	pe := startProxy(t)
	base := "/api/v1/namespaces/" + pe.ns + "/services/"
	for _, id := range []string{"web:80", "web:http", "http:web:80"} {
		got := pe.echo(t, http.MethodPost, base+id+"/proxy/echo/s?k=v", "hi")
		if got.Path != "/echo/s" || got.Query != "k=v" || got.Body != "hi" {
			t.Errorf("%s: backend saw %+v", id, got)
		}
	}
	out, stderr, err := pe.kubectl(t, nil, "get", "--raw", base+"web:http/proxy/echo/raw")
	if err != nil || !strings.Contains(out, `"Path":"/echo/raw"`) {
		t.Fatalf("kubectl get --raw: %q, %v\n%s", out, err, stderr)
	}
	for _, c := range []struct {
		path    string
		code    int
		message string
	}{
		{"web:81/proxy/", 503, `no service port 81 found for service "web"`},
		{"missing:80/proxy/", 404, `services "missing" not found`},
		{"web:other/proxy/", 503, `no endpoints available for service "web"`},
		{"stray:80/proxy/", 503, `no endpoints available for service "stray"`},
		{"a:b:c:d/proxy/", 400, `invalid service request "a:b:c:d"`},
	} {
		r := pe.call(t, http.MethodGet, base+c.path, "")
		if s := r.Status(t); r.Code != c.code || s.Message != c.message {
			t.Errorf("%s = %d %q, want %d %q", c.path, r.Code, s.Message, c.code, c.message)
		}
	}
}

// TestNodeProxy: nodes/proxy reaches the node's kubelet (with the kubelet
// client certificate) or another port of the node; kubectl get --raw
// reads the kubelet's /logs/ with its links rewritten. A node whose
// address is loopback is refused.
func TestNodeProxy(t *testing.T) {
	pe := startProxy(t)
	out, stderr, err := pe.kubectl(t, nil, "get", "--raw", "/api/v1/nodes/node-1/proxy/logs/")
	if err != nil || !strings.Contains(out, `href="/api/v1/nodes/node-1/proxy/logs/kubelet.log"`) || !strings.Contains(out, `href="pods/"`) {
		t.Fatalf("kubectl get --raw logs: %q, %v\n%s", out, err, stderr)
	}
	kubelet := strconv.Itoa(pe.k.Port)
	for _, id := range []string{"node-1", "node-1:" + kubelet, "https:node-1:" + kubelet} {
		got := pe.echo(t, http.MethodPut, "/api/v1/nodes/"+id+"/proxy/echo/n?w=1", "x")
		if got.Path != "/echo/n" || got.Query != "w=1" || got.Method != http.MethodPut || got.Body != "x" {
			t.Errorf("%s: kubelet saw %+v", id, got)
		}
	}
	// Another port of the node: the backend, through the cluster network.
	got := pe.echo(t, http.MethodGet, "/api/v1/nodes/node-1:"+strconv.Itoa(pe.port)+"/proxy/echo/other", "")
	if got.Path != "/echo/other" {
		t.Errorf("node-1's other port: %+v", got)
	}
	for _, c := range []struct {
		path    string
		code    int
		message string
	}{
		{"loopback-node/proxy/", 400, "address not allowed"},
		{"missing/proxy/", 404, `nodes "missing" not found`},
		{"a:b:c:d/proxy/", 400, `invalid node request "a:b:c:d"`},
	} {
		r := pe.call(t, http.MethodGet, "/api/v1/nodes/"+c.path, "")
		if s := r.Status(t); r.Code != c.code || s.Message != c.message {
			t.Errorf("%s = %d %q, want %d %q", c.path, r.Code, s.Message, c.code, c.message)
		}
	}
}
