package metrics

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// scrapeRaw reads the metric families of /metrics through cfg.
func scrapeRaw(t *testing.T, cfg *rest.Config, path string) map[string]*dto.MetricFamily {
	t.Helper()
	body, err := kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient().Get().AbsPath(path).
		SetHeader("Accept", "text/plain").DoRaw(e2eutil.Ctx(t))
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	mfs, err := parseMetrics(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return mfs
}

// requestFamilies are the families whose labels come from requests.
var requestFamilies = []string{
	"apiserver_request_total", "apiserver_request_duration_seconds", "apiserver_request_sli_duration_seconds",
	"apiserver_response_sizes", "apiserver_request_terminations_total", "apiserver_longrunning_requests",
	"apiserver_request_body_size_bytes", "field_validation_request_duration_seconds",
	"authenticated_user_requests", "authentication_attempts", "authorization_attempts_total",
}

// requestSeries counts the series of requestFamilies about config maps
// and non-resource paths (what the test's requests may touch; the
// server's own loops read other resources meanwhile).
func requestSeries(mfs map[string]*dto.MetricFamily) map[string]bool {
	out := map[string]bool{}
	for _, name := range requestFamilies {
		for _, m := range mfs[name].GetMetric() {
			resource := ""
			for _, lp := range m.Label {
				if lp.GetName() == "resource" {
					resource = lp.GetValue()
				}
			}
			if resource == "" || resource == "configmaps" {
				out[name+fmt.Sprint(m.Label)] = true
			}
		}
	}
	return out
}

// randomRequests sends n requests with made-up paths, methods, user
// agents, queries and bodies, each marked with token somewhere.
func randomRequests(t *testing.T, cfg *rest.Config, ns, token string, n int) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", token, "PROPFIND"}
	paths := []string{
		"/api/v1/namespaces/" + ns + "/configmaps/%s", "/api/v1/namespaces/" + ns + "/%s", "/apis/%s/v1/things",
		"/api/v1/%s", "/%s", "/apis/apps/v1/namespaces/" + ns + "/%s/x", "/healthz/%s", "/api/v1/namespaces/" + ns + "/configmaps?watch=%s",
	}
	for i := range n {
		word := fmt.Sprintf("%s%d", token, rand.IntN(1_000_000))
		// Every method meets every path once in each len(methods) *
		// len(paths) requests, so that the first batch makes every series
		// the bounded labels allow and a later one can add none.
		method := methods[(i/len(paths))%len(methods)]
		if method == token {
			method = strings.ToUpper(word)
		}
		url := cfg.Host + fmt.Sprintf(paths[i%len(paths)], word) + "?dryRun=" + word + "&fieldValidation=" + word
		req, err := http.NewRequestWithContext(e2eutil.Ctx(t), method, url, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", word)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		resp.Body.Close()
	}
}

// TestMetricsCardinality sends thousands of requests with random paths,
// verbs, user agents and parameters: none of them becomes a label value,
// and the request families' series count stays flat.
func TestMetricsCardinality(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	randomRequests(t, e.Config, ns, "zqa", 300)
	scrapeRaw(t, e.Config, "/metrics") // a scrape is a request too: its series first
	before := scrapeRaw(t, e.Config, "/metrics")
	randomRequests(t, e.Config, ns, "zqb", 3000)
	after := scrapeRaw(t, e.Config, "/metrics")
	for name, mf := range after {
		for _, m := range mf.Metric {
			for _, lp := range m.Label {
				if strings.Contains(strings.ToLower(lp.GetValue()), "zq") {
					t.Errorf("%s has a label from a request: %s=%q in %v", name, lp.GetName(), lp.GetValue(), m.Label)
				}
			}
		}
	}
	b, a := requestSeries(before), requestSeries(after)
	for s := range a {
		if !b[s] {
			t.Errorf("a series the random requests added: %s", s)
		}
	}
	if len(a) != len(b) {
		t.Errorf("request families grew from %d to %d series after 3000 random requests", len(b), len(a))
	}
}

// TestMetricsAuthorization: /metrics is a nonResourceURL kube's
// system:monitoring role grants; others are refused with 403.
func TestMetricsAuthorization(t *testing.T) {
	e := e2eutil.Start(t)
	as := func(user string, groups ...string) *rest.Config {
		cfg := rest.CopyConfig(e.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		return cfg
	}
	c := kubernetes.NewForConfigOrDie(as("nobody", "system:authenticated"))
	_, err := c.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(e2eutil.Ctx(t))
	if !apierrors.IsForbidden(err) {
		t.Fatalf("GET /metrics as nobody: %v, want 403", err)
	}
	for _, path := range []string{"/metrics", "/metrics/slis"} {
		mfs := scrapeRaw(t, as("prometheus", "system:monitoring", "system:authenticated"), path)
		if len(mfs) == 0 {
			t.Errorf("%s as system:monitoring: no families", path)
		}
	}
	slis := scrapeRaw(t, e.Config, "/metrics/slis")
	if _, ok := slis["kubernetes_healthcheck"]; !ok {
		t.Errorf("/metrics/slis lacks kubernetes_healthcheck after the readiness checks ran: %v", sortedKeys(slis))
	}
}

// TestMetricsFlags: --disabled-metrics, --allow-metric-labels and
// --show-hidden-metrics-for-version change what /metrics shows.
func TestMetricsFlags(t *testing.T) {
	e := e2eutil.Start(t, "--disabled-metrics=apiserver_request_duration_seconds",
		"--allow-metric-labels=apiserver_request_total,resource=namespaces",
		"--show-hidden-metrics-for-version=1.36")
	e.Namespace(t)
	mixedWorkload(t, e.Config)
	mfs := scrapeRaw(t, e.Config, "/metrics")
	if _, ok := mfs["apiserver_request_duration_seconds"]; ok {
		t.Error("--disabled-metrics=apiserver_request_duration_seconds still shows it")
	}
	seen := map[string]bool{}
	for _, m := range mfs["apiserver_request_total"].GetMetric() {
		for _, lp := range m.Label {
			if lp.GetName() == "resource" {
				seen[lp.GetValue()] = true
			}
		}
	}
	if !seen["namespaces"] || !seen["unexpected"] || seen["configmaps"] || len(seen) > 3 {
		t.Errorf("apiserver_request_total's resources with the allow list: %v, want namespaces, unexpected and maybe \"\"", sortedKeys(seen))
	}
	if _, ok := mfs["etcd_bookmark_counts"]; !ok {
		t.Log("etcd_bookmark_counts has no series yet (no progress notification seen)")
	}
}
