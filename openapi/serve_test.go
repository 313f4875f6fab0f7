package openapi

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"
)

func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	s, _ := newTestService(t, coreGroup(), coordinationGroup())
	mux := http.NewServeMux()
	s.Install(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// get asks srv for path with the given headers, following no redirects.
func get(t *testing.T, srv *httptest.Server, path string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{DisableCompression: true},
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestServeV2(t *testing.T) {
	srv := newTestServer(t)
	resp, body := get(t, srv, "/openapi/v2")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi/v2: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	etag := resp.Header.Get("ETag")
	if etag == "" || !json.Valid(body) {
		t.Fatalf("ETag %q, valid JSON %v", etag, json.Valid(body))
	}
	resp, _ = get(t, srv, "/openapi/v2", "If-None-Match", etag)
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: %d, want 304", resp.StatusCode)
	}
	resp, pb := get(t, srv, "/openapi/v2", "Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	if ct := resp.Header.Get("Content-Type"); ct != "application/com.github.proto-openapi.spec.v2.v1.0+protobuf" {
		t.Errorf("protobuf answered as %q", ct)
	}
	var doc openapiv2.Document
	if err := proto.Unmarshal(pb, &doc); err != nil || doc.Swagger != "2.0" {
		t.Errorf("protobuf document: swagger %q, %v", doc.Swagger, err)
	}
	resp, gz := get(t, srv, "/openapi/v2", "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Accept-Encoding") {
		t.Fatalf("gzip asked: Content-Encoding %q, Vary %q", resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	}
	zr, err := gzip.NewReader(strings.NewReader(string(gz)))
	if err != nil {
		t.Fatal(err)
	}
	if unzipped, _ := io.ReadAll(zr); string(unzipped) != string(body) {
		t.Error("the gzipped document is not the document")
	}
	if resp, _ := get(t, srv, "/openapi/v2", "Accept", "text/html"); resp.StatusCode != http.StatusNotAcceptable {
		t.Errorf("Accept: text/html: %d, want 406", resp.StatusCode)
	}
}

func TestServeV3(t *testing.T) {
	srv := newTestServer(t)
	resp, body := get(t, srv, "/openapi/v3")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi/v3: %d", resp.StatusCode)
	}
	var root struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &root); err != nil {
		t.Fatal(err)
	}
	url := root.Paths["api/v1"].ServerRelativeURL
	resp, _ = get(t, srv, url)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "public, immutable" || resp.Header.Get("Expires") == "" {
		t.Errorf("GET %s: %d, Cache-Control %q, Expires %q", url, resp.StatusCode, resp.Header.Get("Cache-Control"), resp.Header.Get("Expires"))
	}
	resp, _ = get(t, srv, "/openapi/v3/api/v1?hash=stale")
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != url {
		t.Errorf("a stale hash: %d to %q, want 301 to %q", resp.StatusCode, resp.Header.Get("Location"), url)
	}
	resp, _ = get(t, srv, "/openapi/v3/api/v1")
	if resp.Header.Get("Cache-Control") != "" {
		t.Errorf("without a hash, Cache-Control is %q", resp.Header.Get("Cache-Control"))
	}
	etag := resp.Header.Get("ETag")
	if resp, _ := get(t, srv, "/openapi/v3/api/v1", "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: %d, want 304", resp.StatusCode)
	}
	resp, pb := get(t, srv, url, "Accept", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf")
	var doc openapiv3.Document
	if err := proto.Unmarshal(pb, &doc); err != nil || doc.Openapi != "3.0.0" {
		t.Errorf("protobuf document (%s): openapi %q, %v", resp.Header.Get("Content-Type"), doc.Openapi, err)
	}
	if resp, _ := get(t, srv, "/openapi/v3/apis/nothing/v1"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown group version: %d, want 404", resp.StatusCode)
	}
}
