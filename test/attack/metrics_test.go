package attack

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
)

// TestMetricLabelsAreNotClientControlled (CVE-2020-8552): values a client
// chooses (methods, content types, groups, resources, subresources,
// user agents, query parameters) never become metric label values, so
// that no stream of requests, authenticated or not, can grow /metrics
// and the server's memory without bound.
func TestMetricLabelsAreNotClientControlled(t *testing.T) {
	t.Parallel()
	s := start(t)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	token := "zq" + hex.EncodeToString(b)
	anonymous := &http.Client{Transport: s.http.Transport}
	anonymous.Transport = anonymousTransport(t, s)
	paths := []string{
		"/apis/" + token + ".example.com/v1/" + token,
		"/apis/apps/" + token + "/deployments",
		"/api/v1/" + token,
		"/api/v1/namespaces/default/" + token,
		"/api/v1/namespaces/default/configmaps/x/" + token,
		"/api/v1/namespaces/default/configmaps?watch=" + token + "&dryRun=" + token + "&fieldManager=" + token,
		"/" + token,
		"/metrics/" + token,
	}
	for _, hc := range []*http.Client{s.http, anonymous} {
		for _, method := range []string{http.MethodGet, http.MethodPost, "ZQ" + strings.ToUpper(token), http.MethodPatch} {
			for _, path := range paths {
				req, err := http.NewRequestWithContext(ctx(t), method, s.URL+path, strings.NewReader("{}"))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/"+token)
				req.Header.Set("Accept", "application/"+token+", */*")
				req.Header.Set("User-Agent", token)
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
		}
	}
	a := s.do(t, http.MethodGet, "/metrics", "", nil)
	if a.code != http.StatusOK {
		t.Fatalf("/metrics: %d", a.code)
	}
	for _, line := range strings.Split(string(a.body), "\n") {
		if strings.Contains(strings.ToLower(line), token) {
			t.Errorf("a client's value became a label: %s", line)
		}
	}
}

// anonymousTransport trusts the server's certificate and sends no
// credentials.
func anonymousTransport(t *testing.T, s *server) http.RoundTripper {
	t.Helper()
	cfg := s.RESTConfig()
	cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.KeyData = nil, nil
	cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = "", ""
	cfg.BearerToken, cfg.BearerTokenFile = "", ""
	return httpClient(t, cfg).Transport
}
