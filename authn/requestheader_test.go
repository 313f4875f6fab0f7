package authn

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestRequestHeader(t *testing.T) {
	proxyCA := newTestCA(t, "front-proxy-ca", nil)
	clientCA := newTestCA(t, "client-ca", nil)
	roots := x509.NewCertPool()
	roots.AddCert(proxyCA.cert)
	verify := func() x509.VerifyOptions { return x509.VerifyOptions{Roots: roots} }
	proxy := proxyCA.client(t, pkix.Name{CommonName: "front-proxy-client"})
	otherProxy := proxyCA.client(t, pkix.Name{CommonName: "other"})
	client := clientCA.client(t, pkix.Name{CommonName: "jane"})
	headers := RequestHeaders{
		Username: []string{"X-Remote-User", "X-User"}, UID: []string{"X-Remote-Uid"},
		Group: []string{"X-Remote-Group", "X-Groups"}, ExtraPrefix: []string{"X-Remote-Extra-", "X-Extra-"},
	}
	aliceHeaders := http.Header{
		"X-Remote-User": {"alice"}, "X-Remote-Uid": {"u-1"}, "X-Remote-Group": {"g1", "", "g2"}, "X-Groups": {"g3"},
		"X-Remote-Extra-Scopes": {"a", "b"}, "X-Extra-Example.com%2fteam": {"x"}, "X-Remote-Extra-Bad%zz": {"y"},
		"X-Other": {"kept"},
	}
	alice := &User{Name: "alice", UID: "u-1", Groups: []string{"g1", "g2", "g3"},
		Extra: map[string][]string{"scopes": {"a", "b"}, "example.com/team": {"x"}, "bad%zz": {"y"}}}

	tests := []struct {
		name         string
		peers        []*x509.Certificate
		allowed      []string
		header       http.Header
		want         *User
		wantErr      string
		wantStripped bool
	}{
		{name: "proxy with headers", peers: []*x509.Certificate{proxy}, allowed: []string{"front-proxy-client"}, header: aliceHeaders, want: alice, wantStripped: true},
		{name: "any proxy name when none is listed", peers: []*x509.Certificate{otherProxy}, header: aliceHeaders, want: alice, wantStripped: true},
		{name: "second user header", peers: []*x509.Certificate{proxy}, header: http.Header{"X-User": {"bob"}},
			want: &User{Name: "bob", Groups: []string{}, Extra: map[string][]string{}}, wantStripped: true},
		{name: "headers without a certificate are ignored", header: aliceHeaders},
		{name: "proxy name not allowed", peers: []*x509.Certificate{otherProxy}, allowed: []string{"front-proxy-client"}, header: aliceHeaders,
			wantErr: "x509: subject with cn=other is not in the allowed list"},
		{name: "certificate of another CA", peers: []*x509.Certificate{client}, header: aliceHeaders, wantErr: "certificate signed by unknown authority"},
		{name: "proxy without a user header", peers: []*x509.Certificate{proxy}, header: http.Header{"X-Remote-Group": {"g"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := requestWithPeers(tt.peers...)
			if tt.peers == nil {
				r.TLS = nil
			}
			for k, vs := range tt.header {
				r.Header[k] = append([]string(nil), vs...)
			}
			resp, ok, err := NewRequestHeader(headers, tt.allowed, verify).AuthenticateRequest(r)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (tt.want != nil) != ok {
				t.Fatalf("ok = %v", ok)
			}
			if ok && !reflect.DeepEqual(resp.User, tt.want) {
				t.Errorf("user = %+v, want %+v", resp.User, tt.want)
			}
			stripped := true
			for k := range tt.header {
				if k != "X-Other" && len(r.Header[k]) > 0 {
					stripped = false
				}
			}
			if tt.header != nil && stripped != tt.wantStripped {
				t.Errorf("headers stripped = %v, want %v: %v", stripped, tt.wantStripped, r.Header)
			}
			if r.Header.Get("X-Other") == "" && tt.header.Get("X-Other") != "" {
				t.Error("an unrelated header was removed")
			}
		})
	}
}

func TestTrimHeaderNames(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string
		wantErr bool
	}{
		{in: nil, want: []string{}},
		{in: []string{" X-Remote-User ", "X-User"}, want: []string{"X-Remote-User", "X-User"}},
		{in: []string{"X-Remote-User", "  "}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := TrimHeaderNames(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("TrimHeaderNames(%q) = %q, %v", tt.in, got, err)
		}
	}
}

func TestRequestHeadersClear(t *testing.T) {
	h := http.Header{"X-Remote-User": {"a"}, "X-Remote-Group": {"g"}, "X-Remote-Uid": {"u"}, "X-Remote-Extra-K": {"v"},
		"x-remote-extra-raw": {"v"}, "X-Remote-Extras": {"v"}, "Accept": {"json"}}
	StandardRequestHeaders.Clear(h)
	// X-Remote-Extras does not start with X-Remote-Extra-.
	if want := (http.Header{"Accept": {"json"}, "X-Remote-Extras": {"v"}}); !reflect.DeepEqual(h, want) {
		t.Errorf("after Clear: %v, want %v", h, want)
	}
}
