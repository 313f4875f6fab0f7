package filters

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// With one slot, a second concurrent read gets kube's 429; a write, a
// watch and a system:masters request still go through.
func TestMaxInFlightLimit(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("slow") != "" {
			entered <- struct{}{}
			<-release
		}
	})
	users := map[string]*authn.User{"admin": {Name: "admin", Groups: []string{"system:masters"}}, "bob": {Name: "bob"}}
	h := Chain(slow, WithRequestInfo(request.NewParser()), func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r.WithContext(authn.WithUser(r.Context(), users[r.Header.Get("X-User")])))
		})
	}, WithMaxInFlightLimit(1, 1))
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(method, path, user string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("X-User", user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	done := make(chan struct{})
	go func() { get("GET", "/api/v1/namespaces/a/configmaps?slow=1", "bob").Body.Close(); close(done) }()
	<-entered

	resp := get("GET", "/api/v1/namespaces/a/configmaps", "bob")
	var status metav1.Status
	_ = json.NewDecoder(resp.Body).Decode(&status)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || status.Reason != metav1.StatusReasonTooManyRequests {
		t.Fatalf("second read = %d %q %+v, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), status)
	}
	for _, c := range []struct{ method, path, user string }{
		{"POST", "/api/v1/namespaces/a/configmaps", "bob"},
		{"GET", "/api/v1/namespaces/a/configmaps?watch=true", "bob"},
		{"GET", "/api/v1/namespaces/a/configmaps", "admin"},
	} {
		if resp := get(c.method, c.path, c.user); resp.StatusCode != 200 {
			t.Errorf("%s %s as %s = %d, want 200", c.method, c.path, c.user, resp.StatusCode)
		}
	}
	close(release)
	<-done
}
