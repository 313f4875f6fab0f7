package authn

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc": "abc", "bearer abc": "abc", "  Bearer abc  ": "abc", "Bearer abc def": "abc",
		"": "", "Basic abc": "", "Bearer": "", "Bearer  abc": "",
	} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		got, ok := BearerToken(r)
		if got != want || ok != (want != "") {
			t.Errorf("%q: got %q %v", header, got, ok)
		}
	}
}

func TestTokenFileAndBearer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	content := "t1,alice,u1,\"a,b\"\nt2,bob,u2\n,empty,u3\nt2,bob2,u4,c\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := NewTokenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	auth := NewBearerToken(tokens, nil)
	req := func(tok string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		return r
	}
	resp, ok, err := auth.AuthenticateRequest(req("t1"))
	if err != nil || !ok || resp.User.Name != "alice" || resp.User.UID != "u1" || !slices.Equal(resp.User.Groups, []string{"a", "b"}) {
		t.Errorf("t1: %+v %v %v", resp, ok, err)
	}
	resp, ok, _ = auth.AuthenticateRequest(req("t2"))
	if !ok || resp.User.Name != "bob2" {
		t.Errorf("duplicate: the last record wins, got %+v", resp)
	}
	if _, ok, err := auth.AuthenticateRequest(req("nope")); ok || !errors.Is(err, ErrInvalidBearerToken) {
		t.Errorf("unknown token: %v %v", ok, err)
	}
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	if _, ok, err := auth.AuthenticateRequest(r); ok || err != nil {
		t.Errorf("no header: %v %v", ok, err)
	}

	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("t1,alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewTokenFile(bad, nil); err == nil {
		t.Error("two columns: want an error")
	}
}

func TestAudienceAgnostic(t *testing.T) {
	a := AudienceAgnostic([]string{"api"}, StaticTokens(map[string]*User{"t": {Name: "u"}}))
	resp, ok, _ := a.AuthenticateToken(WithAudiences(context.Background(), []string{"x", "api"}), "t")
	if !ok || !slices.Equal(resp.Audiences, []string{"api"}) {
		t.Errorf("api audience: %+v %v", resp, ok)
	}
	if _, ok, err := a.AuthenticateToken(WithAudiences(context.Background(), []string{"x"}), "t"); ok || err != nil {
		t.Errorf("other audience: want no opinion, got %v %v", ok, err)
	}
	if _, ok, _ := a.AuthenticateToken(context.Background(), "t"); !ok {
		t.Error("no audiences asked: want the user")
	}
}
