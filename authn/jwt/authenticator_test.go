package jwt

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/oidctest"
)

// newReady builds an Authenticator of c and waits for its discovery.
func newReady(t *testing.T, c *Config, opts Options) *Authenticator {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a, err := New(ctx, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.current.Load().waitHealthy(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.Healthy(); err != nil {
		t.Fatal(err)
	}
	return a
}

func providerConfig(p *oidctest.Provider, m apiserver.ClaimMappings) apiserver.JWTAuthenticator {
	return apiserver.JWTAuthenticator{
		Issuer:        apiserver.Issuer{URL: p.URL, Audiences: []string{"capstan"}, CertificateAuthority: string(p.CAPEM)},
		ClaimMappings: m,
	}
}

// TestAuthenticateToken: kube's errors for bad tokens, and no opinion on
// tokens of other issuers.
func TestAuthenticateToken(t *testing.T) {
	p := oidctest.Start(t)
	ja := providerConfig(p, apiserver.ClaimMappings{
		Username: apiserver.PrefixedClaimOrExpression{Claim: "email", Prefix: ptr.To("")},
		Groups:   apiserver.PrefixedClaimOrExpression{Claim: "groups", Prefix: ptr.To("g:")},
	})
	ja.ClaimValidationRules = []apiserver.ClaimValidationRule{{Claim: "hd", RequiredValue: "example.com"}}
	a := newReady(t, &Config{JWT: []apiserver.JWTAuthenticator{ja}}, Options{})
	ctx := context.Background()
	claims := func(extra oidctest.Claims) oidctest.Claims {
		c := oidctest.Claims{"email": "a@example.com", "hd": "example.com", "groups": []string{"x"}}
		for k, v := range extra {
			c[k] = v
		}
		return p.Claims("capstan", c)
	}

	resp, ok, err := a.AuthenticateToken(ctx, p.Sign(t, claims(nil)))
	if err != nil || !ok || resp.User.Name != "a@example.com" || len(resp.User.Groups) != 1 || resp.User.Groups[0] != "g:x" || resp.User.Extra != nil {
		t.Fatalf("good token: %+v, %v, %v", resp, ok, err)
	}

	now := time.Now()
	for _, tc := range []struct {
		name  string
		token string
		want  string // "" for no opinion
	}{
		{"other issuer", p.Sign(t, claims(oidctest.Claims{"iss": "https://other.example.com"})), ""},
		{"not a JWT", "abc", ""},
		{"expired", p.Sign(t, claims(oidctest.Claims{"exp": now.Add(-time.Minute).Unix()})), "oidc: verify token: oidc: token is expired"},
		// go-oidc allows five minutes; kube one.
		{"nbf in two minutes", p.Sign(t, claims(oidctest.Claims{"nbf": now.Add(2 * time.Minute).Unix()})), "oidc: verify token: oidc: current time"},
		// Beyond int64 seconds as a float, and where time.Unix wraps:
		// go-oidc's own check overflows to the past and passes both.
		{"nbf 1e20", p.Sign(t, claims(oidctest.Claims{"nbf": 1e20})), "oidc: verify token: oidc: current time"},
		{"nbf max int64", p.Sign(t, claims(oidctest.Claims{"nbf": int64(math.MaxInt64)})), "oidc: verify token: oidc: current time"},
		{"audience", p.Sign(t, p.Claims("other", nil)), "oidc: verify token: oidc: expected audience"},
		{"email not verified", p.Sign(t, claims(oidctest.Claims{"email_verified": false})), "oidc: email not verified"},
		{"no email", p.Sign(t, claims(oidctest.Claims{"email": nil})), `oidc: parse username claims "email": claim not present`},
		{"required claim missing", p.Sign(t, claims(oidctest.Claims{"hd": nil})), "oidc: required claim hd not present in ID token"},
		{"required claim value", p.Sign(t, claims(oidctest.Claims{"hd": "x"})), "oidc: required claim hd value does not match. Got = x, want = example.com"},
		{"groups not strings", p.Sign(t, claims(oidctest.Claims{"groups": 3})), `oidc: parse groups claim "groups"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, ok, err := a.AuthenticateToken(ctx, tc.token)
			if ok || resp != nil {
				t.Fatalf("accepted: %+v", resp)
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestCELMappings: username, groups, uid and extra from expressions, and
// the claim and user validation rules with their messages.
func TestCELMappings(t *testing.T) {
	p := oidctest.Start(t)
	ja := providerConfig(p, apiserver.ClaimMappings{
		Username: apiserver.PrefixedClaimOrExpression{Expression: "'u:' + claims.sub"},
		Groups:   apiserver.PrefixedClaimOrExpression{Expression: "claims.?teams.orValue([])"},
		UID:      apiserver.ClaimOrExpression{Expression: "claims.sub + '-uid'"},
		Extra: []apiserver.ExtraMapping{
			{Key: "example.com/dotted", ValueExpression: "claims.org__dot__name"},
			{Key: "example.com/list", ValueExpression: "['a', '', 'b']"},
		},
	})
	ja.ClaimValidationRules = []apiserver.ClaimValidationRule{{Expression: "claims.sub != 'root'", Message: "no root"}}
	ja.UserValidationRules = []apiserver.UserValidationRule{{Expression: "!('banned' in user.groups)", Message: "banned"}}
	a := newReady(t, &Config{JWT: []apiserver.JWTAuthenticator{ja}}, Options{})
	ctx := context.Background()

	resp, ok, err := a.AuthenticateToken(ctx, p.Sign(t, p.Claims("capstan", oidctest.Claims{"teams": []string{"t1", ""}, "org.name": "acme", "jti": "j"})))
	if err != nil || !ok {
		t.Fatalf("good token: %v", err)
	}
	u := resp.User
	if u.Name != "u:alice" || u.UID != "alice-uid" || strings.Join(u.Groups, ",") != "t1" ||
		strings.Join(u.Extra["example.com/dotted"], ",") != "acme" || strings.Join(u.Extra["example.com/list"], ",") != "a,b" ||
		strings.Join(u.Extra["authentication.kubernetes.io/credential-id"], ",") != "JTI=j" {
		t.Errorf("user %+v", u)
	}

	for _, tc := range []struct {
		name   string
		claims oidctest.Claims
		want   string
	}{
		{"claim rule", oidctest.Claims{"sub": "root"}, "oidc: error evaluating claim validation expression: validation expression 'claims.sub != 'root'' failed: no root"},
		{"user rule", oidctest.Claims{"teams": []string{"banned"}}, "oidc: error evaluating user info validation rule: validation expression '!('banned' in user.groups)' failed: banned"},
		{"extra not strings", oidctest.Claims{"org.name": 1}, "oidc: error evaluating extra claim expression: claims.org__dot__name: expression must return a string or a list of strings"},
		{"extra missing", oidctest.Claims{"org.name": nil}, "expression 'claims.org__dot__name' resulted in error: no such key"},
		{"groups not strings", oidctest.Claims{"teams": []int{1}}, "oidc: error evaluating group claim expression: expression must return a string or a list of strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := oidctest.Claims{"org.name": "acme"}
			for k, v := range tc.claims {
				c[k] = v
			}
			_, ok, err := a.AuthenticateToken(ctx, p.Sign(t, p.Claims("capstan", c)))
			if ok || err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("ok %v, error %v, want %q", ok, err, tc.want)
			}
		})
	}
}

// TestReload: a changed file replaces the issuers; an invalid one, or one
// changing the anonymous section, leaves them, as does one whose issuer
// never answers.
func TestReload(t *testing.T) {
	p := oidctest.Start(t)
	path := filepath.Join(t.TempDir(), "auth.yaml")
	file := func(prefix string, anonymous bool) string {
		s := "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: " + p.URL +
			"\n    audiences: [capstan]\n    certificateAuthority: |\n" + indentLines(string(p.CAPEM), "      ") +
			"\n  claimMappings:\n    username:\n      claim: sub\n      prefix: " + prefix + "\n"
		if anonymous {
			s += "anonymous:\n  enabled: true\n"
		}
		return s
	}
	write := func(content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(file("v1-", false))
	c, data, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := newReady(t, c, Options{RetireAfter: time.Millisecond})
	r := &reloader{a: a, path: path, tracked: data}
	token := p.Sign(t, p.Claims("capstan", nil))
	user := func() string {
		resp, _, err := a.AuthenticateToken(context.Background(), token)
		if err != nil {
			t.Fatal(err)
		}
		return resp.User.Name
	}

	if reloaded, err := r.check(); reloaded || err != nil {
		t.Errorf("unchanged file: reloaded %v, %v", reloaded, err)
	}
	write(file("v2-", false))
	if reloaded, err := r.check(); !reloaded || err != nil || user() != "v2-alice" {
		t.Errorf("changed file: reloaded %v, %v, user %s", reloaded, err, user())
	}
	for _, tc := range []struct{ name, content, want string }{
		{"invalid", strings.Replace(file("v3-", false), "https://", "http://", 1), "failed to validate authentication config: jwt[0].issuer.url: Invalid value"},
		{"not decodable", "kind: [", "failed to load authentication config"},
		{"anonymous changed", file("v3-", true), "failed to validate authentication config: anonymous: Forbidden: changed from initial configuration file"},
	} {
		write(tc.content)
		if reloaded, err := r.check(); reloaded || err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: reloaded %v, error %v, want %q", tc.name, reloaded, err, tc.want)
		}
		if reloaded, err := r.check(); reloaded || err != nil {
			t.Errorf("%s again: reloaded %v, %v: an invalid content is tried once", tc.name, reloaded, err)
		}
		if user() != "v2-alice" {
			t.Errorf("%s: user %s, want the old configuration's", tc.name, user())
		}
	}

	// An issuer that never answers: the update fails, the old issuers stay.
	a.opts.UpdateTimeout = 100 * time.Millisecond
	dead := &Config{JWT: []apiserver.JWTAuthenticator{valid()}}
	dead.JWT[0].Issuer.URL = "https://127.0.0.1:1"
	if err := a.Update(dead); err == nil || !strings.Contains(err.Error(), "is not") {
		t.Errorf("update to a dead issuer: %v", err)
	}
	if user() != "v2-alice" {
		t.Errorf("after a failed update: user %s", user())
	}
}

func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+prefix)
}

func TestUnverifiedIssuer(t *testing.T) {
	for token, want := range map[string]string{
		"":                               "",
		"a.b":                            "",
		"{}.e30.x":                       "",
		`{"iss":"x"}`:                    "",
		"x.eyJpc3MiOiJodHRwczovL2EifQ.x": "https://a",
		"x.eyJpc3MiOiJhY2NvdW50cy5nb29nbGUuY29tIn0.x": "https://accounts.google.com",
		"x.!!.x": "",
	} {
		if got := unverifiedIssuer(token); got != want {
			t.Errorf("unverifiedIssuer(%q) = %q, want %q", token, got, want)
		}
	}
}
