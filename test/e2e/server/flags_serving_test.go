package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/testkit"
)

// connections counts the TCP connections n GETs of /version use through
// one HTTP/2 client.
func connections(t *testing.T, e *e2eutil.Env, n int) (conns int, proto string) {
	t.Helper()
	hc := e.HTTPClient(t)
	used := map[string]bool{}
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { used[info.Conn.LocalAddr().String()] = true }}
	for range n {
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(e2eutil.Ctx(t), trace), http.MethodGet, e.URL+"/version", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /version = %d", resp.StatusCode)
		}
		proto = resp.Proto
	}
	return len(used), proto
}

// TestGoawayChance: with --goaway-chance some HTTP/2 requests end their
// connection (the client opens a new one, unseen by the caller); without
// it one connection serves them all.
func TestGoawayChance(t *testing.T) {
	const requests = 600 // P(no GOAWAY at 2%) = 0.98^600 < 1e-5
	if conns, proto := connections(t, e2eutil.Start(t), requests); conns != 1 || proto != "HTTP/2.0" {
		t.Errorf("without --goaway-chance: %d connections over %s, want 1 over HTTP/2.0", conns, proto)
	}
	if conns, _ := connections(t, e2eutil.Start(t, "--goaway-chance=0.02"), requests); conns < 2 {
		t.Errorf("--goaway-chance=0.02: %d connection(s) for %d requests, want several", conns, requests)
	}
}

// TestDisableHTTP2Serving: --disable-http2-serving serves HTTP/1.1 to a
// client that offers HTTP/2.
func TestDisableHTTP2Serving(t *testing.T) {
	if _, proto := connections(t, e2eutil.Start(t, "--disable-http2-serving"), 1); proto != "HTTP/1.1" {
		t.Errorf("protocol %s, want HTTP/1.1", proto)
	}
}

// TestPermitPortSharing: two servers with --permit-port-sharing listen on
// one port (SO_REUSEPORT); without it the second cannot start.
func TestPermitPortSharing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	first := e2eutil.Start(t, "--secure-port="+port, "--permit-port-sharing")
	second := e2eutil.Start(t, "--secure-port="+port, "--permit-port-sharing")
	for _, e := range []*e2eutil.Env{first, second} {
		if _, err := e.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), "default", metav1.GetOptions{}); err != nil {
			t.Errorf("%s: %v", e.URL, err)
		}
	}
	if err := testkit.StartError(t, "--secure-port="+port); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("a third server without --permit-port-sharing: %v, want address already in use", err)
	}
}

// TestShutdownSendRetryAfter: with --shutdown-send-retry-after, once the
// shutdown delay is over, new requests get kube's 429 with Retry-After and
// Connection: close while a request in flight finishes.
func TestShutdownSendRetryAfter(t *testing.T) {
	e := e2eutil.Start(t, "--shutdown-delay-duration=1s", "--shutdown-send-retry-after")
	ns := e.Namespace(t)
	wh := e2eutil.NewAdmissionWebhook(t)
	entered, release := make(chan struct{}), make(chan struct{})
	url := wh.Handle("/hold", func(w http.ResponseWriter, r *http.Request, review *admissionv1.AdmissionReview) {
		if review.Request.Name == "held" {
			close(entered)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		e2eutil.Allow(w, review, nil)
	})
	hook := arv1.ValidatingWebhook{Name: "hold.example.com", SideEffects: ptr.To(arv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		ClientConfig: arv1.WebhookClientConfig{URL: &url, CABundle: wh.CABundle}, Rules: e2eutil.ConfigMapRules, TimeoutSeconds: ptr.To[int32](30)}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("hold")}, Webhooks: []arv1.ValidatingWebhook{hook}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.WaitCalled(t, e, wh, "/hold", ns)

	held := make(chan error, 1)
	go func() {
		_, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held"}}, metav1.CreateOptions{})
		held <- err
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the held create never reached the webhook")
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.Stop(t)
	}()
	// A fresh connection each time: the server closes the ones it refuses.
	cfg := rest.CopyConfig(e.Config)
	cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
	var last e2eutil.Response
	e2eutil.Eventually(t, 10*time.Second, "429 while draining", func(context.Context) (bool, error) {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return false, err
		}
		utilnet.CloseIdleConnectionsFor(hc.Transport)
		last = e2eutil.DoWith(t, hc, http.MethodGet, e.URL+"/api/v1/namespaces/"+ns, nil)
		return last.Code == http.StatusTooManyRequests, nil
	})
	if got := last.Header.Get("Retry-After"); got != "5" || !strings.Contains(string(last.Body), "The apiserver is shutting down, please try again later.") {
		t.Errorf("429: Retry-After %q, body %q", got, last.Body)
	}
	close(release)
	if err := <-held; err != nil {
		t.Errorf("the create in flight during the shutdown: %v", err)
	}
	<-stopped
}
