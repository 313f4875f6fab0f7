package filters

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/capstan-io/capstan/authn"
)

// TestAuthenticationStripsCredentials: what reaches the handler of an
// authenticated request carries neither its token nor front-proxy headers,
// standard or configured; a refused request never reaches it.
func TestAuthenticationStripsCredentials(t *testing.T) {
	accept := authn.AuthenticatorFunc(func(r *http.Request) (*authn.Response, bool, error) {
		if r.Header.Get("Authorization") == "Bearer bad" {
			return nil, false, nil
		}
		return &authn.Response{User: &authn.User{Name: "u"}}, true, nil
	})
	custom := authn.RequestHeaders{Username: []string{"X-Proxy-User"}, ExtraPrefix: []string{"X-Proxy-Extra-"}}
	var seen http.Header
	h := WithAuthentication(accept, custom, slog.New(slog.DiscardHandler))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
	}))

	r := httptest.NewRequest("GET", "/api", nil)
	for k, v := range map[string]string{"Authorization": "Bearer t", "X-Remote-User": "a", "X-Remote-Group": "g", "X-Remote-Uid": "u",
		"X-Remote-Extra-Scope": "s", "X-Proxy-User": "p", "X-Proxy-Extra-Team": "t", "Accept": "application/json"} {
		r.Header.Set(k, v)
	}
	h.ServeHTTP(httptest.NewRecorder(), r)
	if len(seen) != 1 || seen.Get("Accept") != "application/json" {
		t.Errorf("handler saw %v, want only Accept", seen)
	}

	seen = nil
	r = httptest.NewRequest("GET", "/api", nil)
	r.Header.Set("Authorization", "Bearer bad")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized || seen != nil {
		t.Errorf("refused request: %d, handler saw %v", w.Code, seen)
	}
}
