package authn

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestAnonymous(t *testing.T) {
	withTLS := httptest.NewRequest("GET", "/api", nil)
	withTLS.TLS = &tls.ConnectionState{}
	withToken := httptest.NewRequest("GET", "/healthz", nil)
	withToken.Header.Set("Authorization", "Bearer abc")
	tests := []struct {
		name string
		req  *http.Request
	}{
		{"plain", httptest.NewRequest("GET", "/", nil)},
		{"tls without certificate", withTLS},
		{"with a token", withToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, ok, err := NewAnonymous().AuthenticateRequest(tt.req)
			if err != nil || !ok {
				t.Fatalf("= %v, %v", ok, err)
			}
			if u := resp.User; u.Name != "system:anonymous" || !slices.Equal(u.Groups, []string{"system:unauthenticated"}) || u.UID != "" {
				t.Errorf("user = %+v", u)
			}
		})
	}
}
