package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

func TestHealthAndVersion(t *testing.T) {
	e := start(t)
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/readyz/etcd", "/livez/ping", "/healthz/etcd"} {
		if r := e.do(t, http.MethodGet, path, nil); r.code != 200 || string(r.body) != "ok" {
			t.Errorf("GET %s = %d %q", path, r.code, r.body)
		}
	}
	r := e.do(t, http.MethodGet, "/readyz?verbose", nil)
	for _, line := range []string{"[+]ping ok\n", "[+]etcd ok\n", "[+]shutdown ok\n", "readyz check passed\n"} {
		if r.code != 200 || !strings.Contains(string(r.body), line) {
			t.Errorf("/readyz?verbose = %d %q, want a line %q", r.code, r.body, line)
		}
	}
	r = e.do(t, http.MethodGet, "/livez?verbose&exclude=etcd&exclude=nothing", nil)
	if body := string(r.body); r.code != 200 || !strings.Contains(body, "[+]etcd excluded: ok\n") ||
		!strings.Contains(body, `warn: some health checks cannot be excluded: no matches for "nothing"`) {
		t.Errorf("/livez?verbose&exclude=etcd = %d %q", r.code, body)
	}
	if r := e.do(t, http.MethodGet, "/readyz/no-such-check", nil); r.code != 404 {
		t.Errorf("/readyz/no-such-check = %d", r.code)
	}
	r = e.do(t, http.MethodGet, "/version", nil)
	var v version.Info
	if err := json.Unmarshal(r.body, &v); r.code != 200 || err != nil || v.GitVersion == "" || v.GoVersion == "" || v.Platform == "" {
		t.Errorf("/version = %d %s", r.code, r.body)
	}
	if sv, err := e.c.Discovery().ServerVersion(); err != nil || sv.GitVersion != v.GitVersion {
		t.Errorf("client-go ServerVersion = %+v, %v", sv, err)
	}
}

// TestAnonymous: a client without credentials is system:anonymous, as in
// kube: RBAC lets it read the health and version paths
// (system:public-info-viewer) and forbids the rest with kube's messages.
func TestAnonymous(t *testing.T) {
	e := start(t)
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: serverCA(t, e)}}}
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		if r := doWith(t, anon, http.MethodGet, e.URL+path, nil); r.code != 200 {
			t.Errorf("anonymous GET %s = %d %s", path, r.code, r.body)
		}
	}
	// kube's system:public-info-viewer role names the paths, not their
	// named checks: anonymous users may not read /readyz/etcd.
	r := doWith(t, anon, http.MethodGet, e.URL+"/readyz/etcd", nil)
	r.wantStatus(t, 403, metav1.StatusReasonForbidden, `forbidden: User "system:anonymous" cannot get path "/readyz/etcd"`)
	// system:discovery is bound to system:authenticated only.
	for _, path := range []string{"/api", "/apis", "/apis/apps/v1"} {
		r := doWith(t, anon, http.MethodGet, e.URL+path, nil)
		r.wantStatus(t, 403, metav1.StatusReasonForbidden, `forbidden: User "system:anonymous" cannot get path "`+path+`"`)
	}
	for path, msg := range map[string]string{
		"/api/v1/namespaces":                    `namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope`,
		"/api/v1/namespaces/default/configmaps": `configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"`,
		"/apis/coordination.k8s.io/v1/leases":   `leases.coordination.k8s.io is forbidden: User "system:anonymous" cannot list resource "leases" in API group "coordination.k8s.io" at the cluster scope`,
	} {
		r := doWith(t, anon, http.MethodGet, e.URL+path, nil)
		r.wantStatus(t, 403, metav1.StatusReasonForbidden, msg)
	}
	r = doWith(t, anon, http.MethodPost, e.URL+"/api/v1/namespaces", []byte(`{"metadata":{"name":"anon"}}`))
	r.wantStatus(t, 403, metav1.StatusReasonForbidden, `namespaces is forbidden: User "system:anonymous" cannot create resource "namespaces" in API group "" at the cluster scope`)
	if _, err := e.c.CoreV1().Namespaces().Get(ctx(t), "anon", metav1.GetOptions{}); err == nil {
		t.Fatal("an anonymous create went through")
	}
	// A bad credential is never anonymous: 401.
	req, _ := http.NewRequest(http.MethodGet, e.URL+"/version", nil)
	req.Header.Set("Authorization", "Bearer not-a-token")
	resp, err := anon.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("GET /version with a bad token = %d, want 401", resp.StatusCode)
	}
}

// serverCA is the pool of the CA the admin kubeconfig trusts.
func serverCA(t *testing.T, e *env) *x509.CertPool {
	t.Helper()
	pem := e.Config.TLSClientConfig.CAData
	if len(pem) == 0 {
		var err error
		if pem, err = os.ReadFile(e.Config.TLSClientConfig.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("no CA certificate in the admin kubeconfig")
	}
	return pool
}
