package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/proxy"
)

// front serves h on a real listener and returns its URL.
func front(t *testing.T, h http.Handler) *url.URL {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return u
}

// to builds a Handler for the backend at base, path and query included.
func to(t *testing.T, base *url.URL, pathQuery string) *proxy.Handler {
	t.Helper()
	target, err := base.Parse(pathQuery)
	if err != nil {
		t.Fatal(err)
	}
	ordinary, upgrade := proxy.NewTransports(nil, nil)
	t.Cleanup(ordinary.CloseIdleConnections)
	return &proxy.Handler{Target: target, Transport: ordinary, UpgradeTransport: upgrade}
}

func TestForwardsToTargetAndStreamsBodies(t *testing.T) {
	backend := front(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Access-Control-Allow-Origin", "*") // dropped: the front server's CORS decides
		fmt.Fprintf(w, "%s %s?%s host=%s xff=%s user=%s body=%s", r.Method, r.URL.Path, r.URL.RawQuery, r.Host,
			r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Remote-User"), body)
	}))
	h := to(t, backend, "/apis/wardle.example.com/v1alpha1/flunders?limit=1")
	h.Rewrite = func(out *http.Request) { out.Header.Set("X-Remote-User", "alice") }
	srv := front(t, h)

	req, _ := http.NewRequest(http.MethodPost, srv.String()+"/ignored?x=y", strings.NewReader("payload"))
	req.Header.Set("X-Forwarded-For", "10.0.0.1")
	// A client naming the identity header hop-by-hop cannot strip it.
	req.Header.Set("Connection", "X-Remote-User")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	want := fmt.Sprintf("POST /apis/wardle.example.com/v1alpha1/flunders?limit=1 host=%s xff=10.0.0.1, 127.0.0.1 user=alice body=payload", backend.Host)
	if string(got) != want {
		t.Errorf("backend saw\n%s\nwant\n%s", got, want)
	}
	if v := res.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("backend's CORS header passed: %q", v)
	}
}

func TestStreamingAnswerIsFlushedAsItComes(t *testing.T) {
	release := make(chan struct{})
	backend := front(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"type":"ADDED"}`)
		w.(http.Flusher).Flush()
		<-release // the answer goes on until the client saw the first event
	}))
	srv := front(t, to(t, backend, "/watch"))
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.String(), nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || line != "{\"type\":\"ADDED\"}\n" {
		t.Fatalf("first event: %q, %v", line, err)
	}
}

func TestRedirects(t *testing.T) {
	backend := front(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
	}))
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, reject := range []bool{true, false} {
		h := to(t, backend, "/")
		h.RejectRedirects = reject
		res, err := noFollow.Get(front(t, h).String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if reject {
			if res.StatusCode != http.StatusBadGateway || string(body) != "the backend attempted to redirect this request, which is not permitted" {
				t.Errorf("rejected redirect: %d %q", res.StatusCode, body)
			}
			continue
		}
		// Passed to the client as it is, never followed by the proxy.
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "http://169.254.169.254/latest/meta-data" {
			t.Errorf("passed redirect: %d %q", res.StatusCode, res.Header.Get("Location"))
		}
	}
}

func TestErrorsAreStatuses(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL, _ := url.Parse(dead.URL)
	dead.Close()
	live := front(t, http.NotFoundHandler())

	required := to(t, live, "/")
	required.UpgradeRequired = true
	noUpgrades := to(t, live, "/")
	noUpgrades.UpgradeTransport = nil
	cases := []struct {
		name    string
		h       *proxy.Handler
		upgrade bool
		code    int32
		reason  metav1.StatusReason
		message string
	}{
		{"backend down", to(t, deadURL, "/"), false, 503, metav1.StatusReasonServiceUnavailable, "error trying to reach service: dial tcp"},
		{"upgrade required", required, false, 400, metav1.StatusReasonBadRequest, "Upgrade request required"},
		{"upgrade not allowed", noUpgrades, true, 400, metav1.StatusReasonBadRequest, "Upgrade request not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, front(t, tc.h).String(), nil)
			if tc.upgrade {
				req.Header.Set("Connection", "Upgrade")
				req.Header.Set("Upgrade", "SPDY/3.1")
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var s metav1.Status
			if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != int(tc.code) || s.Code != tc.code || s.Reason != tc.reason || !strings.HasPrefix(s.Message, tc.message) || s.Kind != "Status" {
				t.Errorf("got %d %+v", res.StatusCode, s)
			}
		})
	}
}

func TestGlobalUnicastOnlyDialer(t *testing.T) {
	backend := front(t, http.NotFoundHandler())
	d := &net.Dialer{Control: proxy.GlobalUnicastOnly}
	ordinary, _ := proxy.NewTransports(nil, d.DialContext)
	h := &proxy.Handler{Target: backend, Transport: ordinary}
	res, err := http.Get(front(t, h).String())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "address not allowed") {
		t.Errorf("loopback backend through the guarded dialer: %d %s", res.StatusCode, body)
	}
}

func TestProxyable(t *testing.T) {
	for host, ok := range map[string]bool{
		"10.0.0.7": true, "192.0.2.1": true, "2001:db8::1": true,
		"127.0.0.1": false, "::1": false, "169.254.169.254": false, "fe80::1": false,
		"0.0.0.0": false, "::": false, "224.0.0.1": false, "localhost": false,
	} {
		err := proxy.Proxyable(context.Background(), nil, host)
		if (err == nil) != ok {
			t.Errorf("Proxyable(%s) = %v, want allowed %v", host, err, ok)
		}
		if !ok && err != nil && err.Error() != "address not allowed" {
			t.Errorf("Proxyable(%s) = %v, want kube's message", host, err)
		}
	}
}
