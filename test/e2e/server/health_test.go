package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

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
	e := e2eutil.Start(t)
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/readyz/etcd", "/livez/ping", "/healthz/etcd"} {
		if r := e.Do(t, http.MethodGet, path, nil); r.Code != 200 || string(r.Body) != "ok" {
			t.Errorf("GET %s = %d %q", path, r.Code, r.Body)
		}
	}
	r := e.Do(t, http.MethodGet, "/readyz?verbose", nil)
	for _, line := range []string{"[+]ping ok\n", "[+]etcd ok\n", "[+]shutdown ok\n", "readyz check passed\n"} {
		if r.Code != 200 || !strings.Contains(string(r.Body), line) {
			t.Errorf("/readyz?verbose = %d %q, want a line %q", r.Code, r.Body, line)
		}
	}
	r = e.Do(t, http.MethodGet, "/livez?verbose&exclude=etcd&exclude=nothing", nil)
	if body := string(r.Body); r.Code != 200 || !strings.Contains(body, "[+]etcd excluded: ok\n") ||
		!strings.Contains(body, `warn: some health checks cannot be excluded: no matches for "nothing"`) {
		t.Errorf("/livez?verbose&exclude=etcd = %d %q", r.Code, body)
	}
	if r := e.Do(t, http.MethodGet, "/readyz/no-such-check", nil); r.Code != 404 {
		t.Errorf("/readyz/no-such-check = %d", r.Code)
	}
	r = e.Do(t, http.MethodGet, "/version", nil)
	var v version.Info
	if err := json.Unmarshal(r.Body, &v); r.Code != 200 || err != nil || v.GitVersion == "" || v.GoVersion == "" || v.Platform == "" {
		t.Errorf("/version = %d %s", r.Code, r.Body)
	}
	if sv, err := e.Clientset.Discovery().ServerVersion(); err != nil || sv.GitVersion != v.GitVersion {
		t.Errorf("client-go ServerVersion = %+v, %v", sv, err)
	}
}

// TestAnonymous: a client without credentials is system:anonymous, as in
// kube: RBAC lets it read the health and version paths
// (system:public-info-viewer) and forbids the rest with kube's messages.
func TestAnonymous(t *testing.T) {
	e := e2eutil.Start(t)
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: serverCA(t, e)}}}
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		if r := e2eutil.DoWith(t, anon, http.MethodGet, e.URL+path, nil); r.Code != 200 {
			t.Errorf("anonymous GET %s = %d %s", path, r.Code, r.Body)
		}
	}
	// kube's system:public-info-viewer role names the paths, not their
	// named checks: anonymous users may not read /readyz/etcd.
	r := e2eutil.DoWith(t, anon, http.MethodGet, e.URL+"/readyz/etcd", nil)
	r.WantStatus(t, 403, metav1.StatusReasonForbidden, `forbidden: User "system:anonymous" cannot get path "/readyz/etcd"`)
	// system:discovery is bound to system:authenticated only.
	for _, path := range []string{"/api", "/apis", "/apis/apps/v1"} {
		r := e2eutil.DoWith(t, anon, http.MethodGet, e.URL+path, nil)
		r.WantStatus(t, 403, metav1.StatusReasonForbidden, `forbidden: User "system:anonymous" cannot get path "`+path+`"`)
	}
	for path, msg := range map[string]string{
		"/api/v1/namespaces":                    `namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope`,
		"/api/v1/namespaces/default/configmaps": `configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"`,
		"/apis/coordination.k8s.io/v1/leases":   `leases.coordination.k8s.io is forbidden: User "system:anonymous" cannot list resource "leases" in API group "coordination.k8s.io" at the cluster scope`,
	} {
		r := e2eutil.DoWith(t, anon, http.MethodGet, e.URL+path, nil)
		r.WantStatus(t, 403, metav1.StatusReasonForbidden, msg)
	}
	r = e2eutil.DoWith(t, anon, http.MethodPost, e.URL+"/api/v1/namespaces", []byte(`{"metadata":{"name":"anon"}}`))
	r.WantStatus(t, 403, metav1.StatusReasonForbidden, `namespaces is forbidden: User "system:anonymous" cannot create resource "namespaces" in API group "" at the cluster scope`)
	if _, err := e.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), "anon", metav1.GetOptions{}); err == nil {
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
func serverCA(t *testing.T, e *e2eutil.Env) *x509.CertPool {
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
