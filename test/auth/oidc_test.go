package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/internal/oidctest"
	"github.com/capstan-io/capstan/internal/testkit"
)

// oidcWhoami is the user s sees for token (a SelfSubjectReview), or its error.
func oidcWhoami(t *testing.T, s *testkit.Server, token string) (authenticationv1.UserInfo, error) {
	t.Helper()
	r, err := tokenClient(t, s, token).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

// waitUser waits until token authenticates (the issuer's discovery runs in
// the background, as in kube) and until check accepts the user.
func waitUser(t *testing.T, s *testkit.Server, token string, check func(authenticationv1.UserInfo) bool) authenticationv1.UserInfo {
	t.Helper()
	var u authenticationv1.UserInfo
	var err error
	werr := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		u, err = oidcWhoami(t, s, token)
		return err == nil && check(u), nil
	})
	if werr != nil {
		t.Fatalf("token never authenticated as wanted: last user %+v, err %v", u, err)
	}
	return u
}

func anyUser(authenticationv1.UserInfo) bool { return true }

// expectUnauthorized checks that each token gets 401.
func expectUnauthorized(t *testing.T, s *testkit.Server, tokens map[string]string) {
	t.Helper()
	for name, token := range tokens {
		if u, err := oidcWhoami(t, s, token); !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: want 401, got user %+v, err %v", name, u, err)
		}
	}
}

// TestOIDCFlags: the --oidc-* flags. Tokens of the issuer authenticate
// with kube's username prefix (issuer#), prefixed groups and the jti as
// credential id; kubectl auth whoami shows them; a rotated signing key is
// fetched; every bad token gets 401.
func TestOIDCFlags(t *testing.T) {
	p := oidctest.Start(t)
	s := testkit.StartServer(t, "--oidc-issuer-url", p.URL, "--oidc-client-id", "capstan", "--oidc-ca-file", p.CAFile,
		"--oidc-groups-claim", "groups", "--oidc-groups-prefix", "oidc:", "--oidc-required-claim", "hd=example.com")
	claims := func(extra oidctest.Claims) oidctest.Claims {
		base := oidctest.Claims{"groups": []string{"dev", "ops"}, "hd": "example.com", "jti": "id-1"}
		for k, v := range extra {
			base[k] = v
		}
		return p.Claims("capstan", base)
	}
	token := p.Sign(t, claims(nil))
	u := waitUser(t, s, token, anyUser)
	want := authenticationv1.UserInfo{Username: p.URL + "#alice", Groups: []string{"oidc:dev", "oidc:ops", "system:authenticated"},
		Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/credential-id": {"JTI=id-1"}}}
	if u.Username != want.Username || !slices.Equal(u.Groups, want.Groups) || u.UID != "" ||
		!slices.Equal(u.Extra["authentication.kubernetes.io/credential-id"], want.Extra["authentication.kubernetes.io/credential-id"]) {
		t.Errorf("user %+v, want %+v", u, want)
	}

	out, stderr, err := testkit.RunKubectl(t, tokenKubeconfig(t, s, token), nil, "auth", "whoami", "-o", "json")
	if err != nil {
		t.Fatalf("whoami: %v\n%s", err, stderr)
	}
	for _, w := range []string{`"username": "` + p.URL + `#alice"`, `"oidc:dev"`, `"JTI=id-1"`} {
		if !strings.Contains(out, w) {
			t.Errorf("kubectl auth whoami misses %s:\n%s", w, out)
		}
	}

	// A single string is one group.
	if u, err := oidcWhoami(t, s, p.Sign(t, claims(oidctest.Claims{"groups": "admins"}))); err != nil || !slices.Equal(u.Groups, []string{"oidc:admins", "system:authenticated"}) {
		t.Errorf("string groups claim: %+v, %v", u, err)
	}

	// Key rotation: a token of a new key makes capstan fetch the key set again.
	fetches := p.KeyFetches.Load()
	p.AddKey(t)
	if u, err := oidcWhoami(t, s, p.Sign(t, claims(nil))); err != nil || u.Username != p.URL+"#alice" {
		t.Errorf("token of a rotated key: %+v, %v", u, err)
	}
	if p.KeyFetches.Load() == fetches {
		t.Error("the key set was not fetched again for a new key")
	}

	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	expectUnauthorized(t, s, map[string]string{
		"expired":          p.Sign(t, claims(oidctest.Claims{"exp": now.Add(-time.Minute).Unix(), "iat": now.Add(-time.Hour).Unix()})),
		"not yet valid":    p.Sign(t, claims(oidctest.Claims{"nbf": now.Add(time.Hour).Unix()})),
		"wrongly signed":   oidctest.SignWith(t, otherKey, p.SigningKID(), claims(nil)),
		"wrong audience":   p.Sign(t, p.Claims("someone-else", oidctest.Claims{"hd": "example.com"})),
		"wrong issuer":     p.Sign(t, claims(oidctest.Claims{"iss": "https://other.example.com"})),
		"required claim":   p.Sign(t, claims(oidctest.Claims{"hd": "evil.com"})),
		"no required":      p.Sign(t, p.Claims("capstan", nil)),
		"no username":      p.Sign(t, claims(oidctest.Claims{"sub": nil})),
		"not a jwt":        "not.a.jwt",
		"unsigned payload": strings.Join(strings.Split(token, ".")[:2], ".") + ".",
	})
}

// authConfig writes an AuthenticationConfiguration file.
func authConfig(t *testing.T, path, content string) {
	t.Helper()
	// Write and rename, so that a reload never reads half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+prefix)
}

// fileConfig is a configuration of two issuers: p1 with CEL mappings and
// rules, p2 mapping the email claim; usernamePrefix names p1's users.
func fileConfig(p1, p2 *oidctest.Provider, usernamePrefix string) string {
	return `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ` + p1.URL + `
    audiences: [capstan, other]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
` + indent(string(p1.CAPEM), "      ") + `
  claimValidationRules:
  - expression: "claims.hd == 'example.com'"
    message: hd must be example.com
  - claim: tier
    requiredValue: gold
  claimMappings:
    username:
      expression: "'` + usernamePrefix + `' + claims.sub"
    groups:
      expression: "claims.roles.split(',').map(r, 'role:' + r)"
    uid:
      claim: uid
    extra:
    - key: example.com/tenant
      valueExpression: "claims.tenant"
    - key: example.com/empty
      valueExpression: "''"
  userValidationRules:
  - expression: "!user.username.startsWith('` + usernamePrefix + `system:')"
    message: no system users
- issuer:
    url: ` + p2.URL + `
    audiences: [capstan]
    certificateAuthority: |
` + indent(string(p2.CAPEM), "      ") + `
  claimMappings:
    username:
      claim: email
      prefix: ""
`
}

// TestAuthenticationConfigFile: --authentication-config with two issuers,
// CEL claim mappings (username, groups, extra), a uid claim, claim and
// user validation rules (401 when they fail), the email_verified rule,
// and the reload of the file.
func TestAuthenticationConfigFile(t *testing.T) {
	p1, p2 := oidctest.Start(t), oidctest.Start(t)
	path := filepath.Join(t.TempDir(), "auth.yaml")
	authConfig(t, path, fileConfig(p1, p2, "v1:"))
	s := testkit.StartServer(t, "--authentication-config", path)

	good := oidctest.Claims{"hd": "example.com", "tier": "gold", "roles": "admin,dev", "uid": "u-1", "tenant": "acme"}
	with := func(extra oidctest.Claims) oidctest.Claims {
		c := oidctest.Claims{}
		for k, v := range good {
			c[k] = v
		}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	token := p1.Sign(t, p1.Claims("capstan", good))
	u := waitUser(t, s, token, anyUser)
	if u.Username != "v1:alice" || u.UID != "u-1" || !slices.Equal(u.Groups, []string{"role:admin", "role:dev", "system:authenticated"}) ||
		!slices.Equal(u.Extra["example.com/tenant"], []string{"acme"}) || len(u.Extra) != 1 {
		t.Errorf("p1 user %+v", u)
	}
	// The second audience, with MatchAny.
	if u, err := oidcWhoami(t, s, p1.Sign(t, p1.Claims("other", good))); err != nil || u.Username != "v1:alice" {
		t.Errorf("audience other: %+v, %v", u, err)
	}

	// p2 maps the email claim: verified or unsaid, not unverified.
	waitUser(t, s, p2.Sign(t, p2.Claims("capstan", oidctest.Claims{"email": "bob@example.com", "email_verified": true})), func(u authenticationv1.UserInfo) bool {
		return u.Username == "bob@example.com"
	})
	if u, err := oidcWhoami(t, s, p2.Sign(t, p2.Claims("capstan", oidctest.Claims{"email": "carol@example.com"}))); err != nil || u.Username != "carol@example.com" {
		t.Errorf("email without email_verified: %+v, %v", u, err)
	}

	expectUnauthorized(t, s, map[string]string{
		"claim rule (CEL)":        p1.Sign(t, p1.Claims("capstan", with(oidctest.Claims{"hd": "evil.com"}))),
		"claim rule (required)":   p1.Sign(t, p1.Claims("capstan", with(oidctest.Claims{"tier": "silver"}))),
		"user rule":               p1.Sign(t, p1.Claims("capstan", with(oidctest.Claims{"sub": "system:admin"}))),
		"groups expression fails": p1.Sign(t, p1.Claims("capstan", with(oidctest.Claims{"roles": []string{"admin"}}))),
		"no uid claim":            p1.Sign(t, p1.Claims("capstan", with(oidctest.Claims{"uid": nil}))),
		"email not verified":      p2.Sign(t, p2.Claims("capstan", oidctest.Claims{"email": "eve@example.com", "email_verified": false})),
		"p2 audience":             p2.Sign(t, p2.Claims("other", oidctest.Claims{"email": "bob@example.com"})),
		"p1 token, p2 key":        p2.Sign(t, p1.Claims("capstan", good)),
	})

	// Reload: the new mapping applies once the file changes.
	authConfig(t, path, fileConfig(p1, p2, "v2:"))
	waitUser(t, s, token, func(u authenticationv1.UserInfo) bool { return u.Username == "v2:alice" })
}

// TestAuthenticationConfigStartErrors: capstan does not start with an
// invalid configuration, and says why in kube-apiserver v1.37.2's words.
func TestAuthenticationConfigStartErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	header := "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"
	invalid := write("invalid.yaml", header+`jwt:
- issuer:
    url: http://example.com?x=1
  claimMappings:
    username:
      claim: sub
`)
	email := write("email.yaml", header+`jwt:
- issuer:
    url: https://example.com
    audiences: [a]
  claimMappings:
    username:
      expression: claims.email
`)
	saIssuer := write("sa.yaml", header+`jwt:
- issuer:
    url: https://kubernetes.default.svc.cluster.local
    audiences: [a]
  claimMappings:
    username:
      claim: sub
      prefix: ""
`)
	unknown := write("unknown.yaml", header+"jwt:\n- issuer:\n    url: https://example.com\n  unknownField: 1\n")
	anonymous := write("anonymous.yaml", header+"anonymous:\n  enabled: true\n")
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"invalid file", []string{"--authentication-config", invalid},
			`invalid authentication configuration: [jwt[0].issuer.url: Invalid value: "http://example.com?x=1": URL scheme must be https, ` +
				`jwt[0].issuer.url: Invalid value: "http://example.com?x=1": URL must not contain a query, ` +
				`jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required, ` +
				`jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing]`},
		{"email without email_verified", []string{"--authentication-config", email},
			`invalid authentication configuration: jwt[0].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression`},
		{"service account issuer", []string{"--authentication-config", saIssuer},
			`issuer.url: Invalid value: "https://kubernetes.default.svc.cluster.local": URL must not overlap with disallowed issuers: [https://kubernetes.default.svc.cluster.local]`},
		{"unknown field", []string{"--authentication-config", unknown},
			`failed to load authentication configuration from file "` + unknown + `": strict decoding error: unknown field "jwt[0].unknownField"`},
		{"file and flags", []string{"--authentication-config", email, "--oidc-issuer-url", "https://example.com"},
			"authentication-config file and oidc-* flags are mutually exclusive"},
		{"issuer without client", []string{"--oidc-issuer-url", "https://example.com"},
			"oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set"},
		{"http issuer flag", []string{"--oidc-issuer-url", "http://example.com", "--oidc-client-id", "c"},
			`invalid authentication configuration: jwt[0].issuer.url: Invalid value: "http://example.com": URL scheme must be https`},
		{"anonymous twice", []string{"--authentication-config", anonymous, "--anonymous-auth=true"},
			"anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := app.NewOptions()
			fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(append([]string{"--data-dir", t.TempDir(), "--secure-port", "0", "--bind-address", "127.0.0.1"}, tc.flags...)); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := app.Run(ctx, o, io.Discard, func(*app.Process) { t.Error("capstan started") })
			if err == nil || err.Error() != tc.want {
				t.Errorf("error:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestAuthenticationConfigAnonymous: the anonymous section of the file
// decides anonymous requests: only on its conditions' paths.
func TestAuthenticationConfigAnonymous(t *testing.T) {
	path := filepath.Join(t.TempDir(), "auth.yaml")
	authConfig(t, path, "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"+
		"anonymous:\n  enabled: true\n  conditions:\n  - path: /livez\n  - path: /version\n")
	s := testkit.StartServer(t, "--authentication-config", path)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: insecureTLS()}}
	for path, want := range map[string]int{"/livez": 200, "/version": 200, "/healthz": 401, "/readyz": 401, "/api": 401} {
		resp, err := client.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("anonymous GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
