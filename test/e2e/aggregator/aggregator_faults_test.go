package aggregator

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bufio"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/internal/testkit"
)

// fakeExtension is an HTTPS backend whose discovery document passes the
// availability check and whose other paths do what the test asks.
func fakeExtension(t *testing.T, group, version string, other http.HandlerFunc) int {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/apis/"+group+"/"+version {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"%s/%s","resources":[{"name":"things","namespaced":true,"kind":"Thing","verbs":["get","list"]}]}`, group, version)
			return
		}
		other(w, r)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	return port
}

// registerFake registers group/version at port behind an ExternalName
// Service for localhost in ns.
func (e *aggEnv) registerFake(t *testing.T, ns, group, version string, port int, mutate func(*apiregv1.APIService)) string {
	t.Helper()
	name := version + "." + group
	svcName := strings.ReplaceAll(group, ".", "-")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svcName}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if _, err := e.Clientset.CoreV1().Services(ns).Create(e2eutil.Ctx(t), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: apiregv1.APIServiceSpec{
		Group: group, Version: version, GroupPriorityMinimum: 1000, VersionPriority: 15, InsecureSkipTLSVerify: true,
		Service: &apiregv1.ServiceReference{Namespace: ns, Name: svcName, Port: ptrInt32(int32(port))}}}
	if mutate != nil {
		mutate(as)
	}
	if _, err := e.AggregatorClient(t).ApiregistrationV1().APIServices().Create(e2eutil.Ctx(t), as, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func ptrInt32(v int32) *int32 { return &v }

// remoteVersion returns the only version of group in aggregated discovery.
func (e *aggEnv) remoteVersion(t *testing.T, group string) apidiscoveryv2.APIVersionDiscovery {
	t.Helper()
	r := e.Do(t, http.MethodGet, "/apis", nil, "Accept", e2eutil.AggregatedAccept)
	var list apidiscoveryv2.APIGroupDiscoveryList
	if r.Code != 200 || json.Unmarshal(r.Body, &list) != nil {
		t.Fatalf("aggregated /apis = %d %.300s", r.Code, r.Body)
	}
	for _, g := range list.Items {
		if g.Name == group && len(g.Versions) == 1 {
			return g.Versions[0]
		}
	}
	t.Fatalf("aggregated /apis has no single version of %s", group)
	return apidiscoveryv2.APIVersionDiscovery{}
}

// get requests path through capstan as the admin and returns the code and
// body.
func (e *aggEnv) get(t *testing.T, path string) (int, string) {
	t.Helper()
	r := e.Do(t, http.MethodGet, path, nil)
	return r.Code, string(r.Body)
}

// TestAggregatorFaults: what kube answers, and what the APIService's
// condition says, when the backend is missing, down, untrusted, redirects
// or refuses an upgrade.
func TestAggregatorFaults(t *testing.T) {
	e := startAggregator(t)
	ns := e.Namespace(t)
	aggs := e.AggregatorClient(t).ApiregistrationV1().APIServices()

	t.Run("missing service", func(t *testing.T) {
		as := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.missing.example.com"}, Spec: apiregv1.APIServiceSpec{
			Group: "missing.example.com", Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 15, InsecureSkipTLSVerify: true,
			Service: &apiregv1.ServiceReference{Namespace: ns, Name: "nothing"}}}
		if _, err := aggs.Create(e2eutil.Ctx(t), as, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		msg := e.waitCondition(t, as.Name, apiregv1.ConditionFalse, "ServiceNotFound")
		if want := fmt.Sprintf("service/nothing in %q is not present", ns); msg != want {
			t.Errorf("message %q, want %q", msg, want)
		}
		if code, body := e.get(t, "/apis/missing.example.com/v1/namespaces/default/things"); code != 503 || body != "service unavailable\n" {
			t.Errorf("request: %d %q", code, body)
		}
		out, _, _ := testkit.RunKubectl(t, e.Kubeconfig, nil, "get", "apiservice", as.Name)
		if !strings.Contains(out, "False (ServiceNotFound)") {
			t.Errorf("kubectl get apiservice:\n%s", out)
		}
	})
	t.Run("port not served", func(t *testing.T) {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ported"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
		if _, err := e.Clientset.CoreV1().Services(ns).Create(e2eutil.Ctx(t), svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		as := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.ported.example.com"}, Spec: apiregv1.APIServiceSpec{
			Group: "ported.example.com", Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 15, InsecureSkipTLSVerify: true,
			Service: &apiregv1.ServiceReference{Namespace: ns, Name: "ported", Port: ptrInt32(8443)}}}
		if _, err := aggs.Create(e2eutil.Ctx(t), as, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		msg := e.waitCondition(t, as.Name, apiregv1.ConditionFalse, "ServicePortError")
		if want := fmt.Sprintf("service/ported in %q is not listening on port 8443", ns); msg != want {
			t.Errorf("message %q, want %q", msg, want)
		}
	})
	t.Run("backend down", func(t *testing.T) {
		port := testkit.FreePort(t)
		name := e.registerFake(t, ns, "down.example.com", "v1", port, nil)
		msg := e.waitCondition(t, name, apiregv1.ConditionFalse, "FailedDiscoveryCheck")
		want := fmt.Sprintf(`failing or missing response from https://localhost:%d/apis/down.example.com/v1: Get "https://localhost:%d/apis/down.example.com/v1": dial tcp`, port, port)
		if !strings.HasPrefix(msg, want) {
			t.Errorf("message %q, want it to start %q", msg, want)
		}
	})
	t.Run("a backend that goes away stays in discovery, stale", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"gone.example.com/v1","resources":[{"name":"things","namespaced":true,"kind":"Thing","verbs":["get"]}]}`)
		}))
		defer srv.Close()
		u, _ := url.Parse(srv.URL)
		port, _ := strconv.Atoi(u.Port())
		name := e.registerFake(t, ns, "gone.example.com", "v1", port, nil)
		e.waitCondition(t, name, apiregv1.ConditionTrue, "Passed")
		if v := e.remoteVersion(t, "gone.example.com"); v.Freshness != apidiscoveryv2.DiscoveryFreshnessCurrent || len(v.Resources) != 1 {
			t.Fatalf("available: %+v", v)
		}
		srv.Close()
		// A label change makes the availability check run again now.
		patch := []byte(`{"metadata":{"labels":{"poke":"1"}}}`)
		if _, err := aggs.Patch(e2eutil.Ctx(t), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitCondition(t, name, apiregv1.ConditionFalse, "FailedDiscoveryCheck")
		v := e.remoteVersion(t, "gone.example.com")
		if v.Freshness != apidiscoveryv2.DiscoveryFreshnessStale || len(v.Resources) != 1 || v.Resources[0].Resource != "things" {
			t.Errorf("after the backend went away, aggregated discovery has %+v; want the last resources, Stale", v)
		}
		code, body := e.get(t, "/apis")
		if code != 200 || !strings.Contains(body, `"gone.example.com/v1"`) {
			t.Errorf("legacy /apis leaves out an unavailable APIService's group, as kube does not: %d %.200s", code, body)
		}
	})
	t.Run("wrong certificate", func(t *testing.T) {
		port := fakeExtension(t, "untrusted.example.com", "v1", http.NotFound)
		otherCA, _ := e2eutil.ServingCert(t, "other")
		name := e.registerFake(t, ns, "untrusted.example.com", "v1", port, func(as *apiregv1.APIService) {
			as.Spec.InsecureSkipTLSVerify, as.Spec.CABundle = false, otherCA
		})
		msg := e.waitCondition(t, name, apiregv1.ConditionFalse, "FailedDiscoveryCheck")
		if !strings.Contains(msg, "tls: failed to verify certificate") {
			t.Errorf("message %q", msg)
		}
	})
	t.Run("redirect, garbage and a refused upgrade", func(t *testing.T) {
		port := fakeExtension(t, "odd.example.com", "v1", func(w http.ResponseWriter, r *http.Request) {
			switch {
			case strings.HasSuffix(r.URL.Path, "/redirect"):
				http.Redirect(w, r, "https://169.254.169.254/", http.StatusFound)
			case strings.HasSuffix(r.URL.Path, "/upgrade"):
				http.Error(w, "no upgrades here", http.StatusForbidden)
			default:
				_, _ = io.WriteString(w, "\x00\x01 not json")
			}
		})
		name := e.registerFake(t, ns, "odd.example.com", "v1", port, nil)
		e.waitCondition(t, name, apiregv1.ConditionTrue, "Passed")
		code, body := e.get(t, "/apis/odd.example.com/v1/namespaces/default/things/x/redirect")
		if code != http.StatusBadGateway || body != "the backend attempted to redirect this request, which is not permitted" {
			t.Errorf("redirect: %d %q", code, body)
		}
		if code, body := e.get(t, "/apis/odd.example.com/v1/namespaces/default/things/x"); code != 200 || body != "\x00\x01 not json" {
			t.Errorf("garbage passes as it is: %d %q", code, body)
		}
		e.refusedUpgrade(t, "/apis/odd.example.com/v1/namespaces/default/things/x/upgrade")
	})
}

// upgradeThrough asks for an upgrade at path over HTTP/1.1 as the admin
// and returns the connection, a reader on it and the answer.
func (e *aggEnv) upgradeThrough(t *testing.T, path string) (*tls.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	u, _ := url.Parse(e.URL)
	cfg := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}
	if len(e.Config.TLSClientConfig.CertData) > 0 {
		pair, err := tls.X509KeyPair(e.Config.TLSClientConfig.CertData, e.Config.TLSClientConfig.KeyData)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	conn, err := tls.Dial("tcp", u.Host, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	auth := ""
	if e.Config.BearerToken != "" {
		auth = "Authorization: Bearer " + e.Config.BearerToken + "\r\n"
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n%sConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n", path, u.Host, auth)
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return conn, br, res
}

// refusedUpgrade checks that the backend's refusal of an upgrade at path
// arrives and the connection ends.
func (e *aggEnv) refusedUpgrade(t *testing.T, path string) {
	t.Helper()
	_, br, res := e.upgradeThrough(t, path)
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusForbidden || string(body) != "no upgrades here\n" {
		t.Fatalf("refused upgrade: %s %q", res.Status, body)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after a refused upgrade the connection is still open: %v", err)
	}
}

// echoUpgrade accepts an upgrade and echoes what it reads.
func echoUpgrade(w http.ResponseWriter, r *http.Request) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n")
	_ = rw.Flush()
	_, _ = io.Copy(conn, rw)
}

// TestAggregatorUpgrade: an upgrade the backend accepts, on a path that is
// not long-running (so under the timeout filter), is tunnelled both ways.
func TestAggregatorUpgrade(t *testing.T) {
	e := startAggregator(t)
	ns := e.Namespace(t)
	port := fakeExtension(t, "tunnel.example.com", "v1", echoUpgrade)
	name := e.registerFake(t, ns, "tunnel.example.com", "v1", port, nil)
	e.waitCondition(t, name, apiregv1.ConditionTrue, "Passed")
	conn, br, res := e.upgradeThrough(t, "/apis/tunnel.example.com/v1/namespaces/default/things/x/console")
	if res.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("upgrade: %s %q", res.Status, body)
	}
	for _, msg := range []string{"ping\n", "pong\n"} {
		if _, err := io.WriteString(conn, msg); err != nil {
			t.Fatal(err)
		}
		if got, err := br.ReadString('\n'); err != nil || got != msg {
			t.Fatalf("echo of %q: %q, %v", msg, got, err)
		}
	}
}

// TestAggregatorRedirectsPassed: with --aggregator-reject-forwarding-redirect=false
// a backend's redirect reaches the client as it is, not followed by capstan.
func TestAggregatorRedirectsPassed(t *testing.T) {
	e := startAggregator(t, "--aggregator-reject-forwarding-redirect=false")
	ns := e.Namespace(t)
	port := fakeExtension(t, "moved.example.com", "v1", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example.com/", http.StatusFound)
	})
	name := e.registerFake(t, ns, "moved.example.com", "v1", port, nil)
	e.waitCondition(t, name, apiregv1.ConditionTrue, "Passed")
	hc := e.HTTPClient(t)
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r := e2eutil.DoWith(t, hc, http.MethodGet, e.URL+"/apis/moved.example.com/v1/namespaces/default/things/x", nil)
	if r.Code != http.StatusFound || r.Header.Get("Location") != "https://elsewhere.example.com/" {
		t.Errorf("redirect: %d %q", r.Code, r.Header.Get("Location"))
	}
}
