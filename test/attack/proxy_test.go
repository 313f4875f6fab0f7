package attack

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

// TestProxyUpgradeAbuse (CVE-2018-1002105, CVE-2020-8559): through the
// aggregator's proxy, a backend that refuses an upgrade does not leave
// the client a connection that goes on to the backend with the server's
// credentials (the client's next request on it never arrives there), and
// a backend that answers an upgrade with a redirect is not followed to
// the place it names.
func TestProxyUpgradeAbuse(t *testing.T) {
	t.Parallel()
	s := start(t)
	var elsewhere, smuggled atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(target.Close)
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/apis/abuse.example.com/v1":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"abuse.example.com/v1","resources":[{"name":"things","namespaced":true,"kind":"Thing","verbs":["get"]}]}`)
		case strings.HasSuffix(r.URL.Path, "/refuse"):
			http.Error(w, "no upgrades here", http.StatusForbidden)
		case strings.HasSuffix(r.URL.Path, "/redirect"):
			http.Redirect(w, r, target.URL+"/stolen", http.StatusFound)
		case strings.HasSuffix(r.URL.Path, "/smuggled"):
			smuggled.Add(1)
		default:
			http.NotFound(w, r) // OpenAPI and other discovery
		}
	}))
	backend.StartTLS()
	t.Cleanup(backend.Close)
	registerBackend(t, s, backend.URL)

	const things = "/apis/abuse.example.com/v1/namespaces/default/things/x/"
	conn, br, res := upgrade(t, s, things+"refuse")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("refused upgrade: %s %q", res.Status, body)
	}
	// The attack: go on talking to the backend over the same connection.
	fmt.Fprintf(conn, "GET %ssmuggled HTTP/1.1\r\nHost: x\r\n\r\n", things)
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after a refused upgrade the connection is still open: %v", err)
	}

	_, _, res = upgrade(t, s, things+"redirect")
	if res.StatusCode == http.StatusSwitchingProtocols {
		t.Errorf("a redirected upgrade was tunnelled")
	}
	if elsewhere.Load() != 0 || smuggled.Load() != 0 {
		t.Errorf("the redirect target was reached %d times, the smuggled request %d times", elsewhere.Load(), smuggled.Load())
	}
}

// registerBackend serves abuse.example.com/v1 from the backend at rawURL,
// behind an ExternalName Service for localhost, and waits until it is
// available.
func registerBackend(t *testing.T, s *server, rawURL string) {
	t.Helper()
	u, _ := url.Parse(rawURL)
	port, _ := strconv.Atoi(u.Port())
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "abuse"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if _, err := s.client.CoreV1().Services("default").Create(ctx(t), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := int32(port)
	as := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.abuse.example.com"}, Spec: apiregv1.APIServiceSpec{
		Group: "abuse.example.com", Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 15, InsecureSkipTLSVerify: true,
		Service: &apiregv1.ServiceReference{Namespace: "default", Name: "abuse", Port: &p}}}
	ac := aggregator.NewForConfigOrDie(s.RESTConfig()).ApiregistrationV1().APIServices()
	if _, err := ac.Create(ctx(t), as, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx(t), 100*time.Millisecond, 50*time.Second, true, func(c context.Context) (bool, error) {
		got, err := ac.Get(c, as.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiregv1.Available && cond.Status == apiregv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the backend's APIService never became available: %v", err)
	}
}

// upgrade asks for an SPDY upgrade of path over a raw TLS connection, as
// the admin, and returns the connection, its reader and the answer.
func upgrade(t *testing.T, s *server, path string) (*tls.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	u, _ := url.Parse(s.URL)
	cfg := s.RESTConfig()
	pair, err := tls.X509KeyPair(cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}, Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n", path, u.Host)
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return conn, br, res
}
