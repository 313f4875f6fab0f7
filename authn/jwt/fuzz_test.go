package jwt

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/oidctest"
)

// FuzzOIDCToken: any claims, signed by the issuer's key and sent to an
// authenticator with claim mappings and one with CEL mappings and rules,
// are refused, or accepted only when the token is the issuer's, for our
// audience, within its lifetime, as a user with a name.
func FuzzOIDCToken(f *testing.F) {
	for _, seed := range []string{
		`{"email":"a@example.com","hd":"example.com","groups":["x"]}`,
		`{"email":"a@example.com","hd":"example.com","email_verified":"true"}`,
		`{"email":"a@example.com","hd":"example.com","groups":"g","exp":1}`,
		`{"sub":"root","teams":["t"],"org.name":"acme"}`,
		`{"teams":[1,2],"org.name":{"a":1},"aud":["x","capstan"]}`,
		`{"iss":"https://other.example.com","sub":"","nbf":1e300}`,
		`{"_claim_names":{"groups":"src1"},"_claim_sources":{"src1":{"endpoint":"https://127.0.0.1:1/"}}}`,
	} {
		f.Add(uint8(0), []byte(seed))
		f.Add(uint8(1), []byte(seed))
	}
	p := oidctest.Start(f)
	plain := providerConfig(p, apiserver.ClaimMappings{
		Username: apiserver.PrefixedClaimOrExpression{Claim: "email", Prefix: ptr.To("")},
		Groups:   apiserver.PrefixedClaimOrExpression{Claim: "groups", Prefix: ptr.To("g:")},
	})
	plain.ClaimValidationRules = []apiserver.ClaimValidationRule{{Claim: "hd", RequiredValue: "example.com"}}
	withCEL := providerConfig(p, apiserver.ClaimMappings{
		Username: apiserver.PrefixedClaimOrExpression{Expression: "'u:' + claims.sub"},
		Groups:   apiserver.PrefixedClaimOrExpression{Expression: "claims.?teams.orValue([])"},
		UID:      apiserver.ClaimOrExpression{Expression: "claims.sub + '-uid'"},
		Extra:    []apiserver.ExtraMapping{{Key: "example.com/org", ValueExpression: "claims.?org__dot__name.orValue('none')"}},
	})
	withCEL.ClaimValidationRules = []apiserver.ClaimValidationRule{{Expression: "claims.sub != 'root'", Message: "no root"}}
	withCEL.UserValidationRules = []apiserver.UserValidationRule{{Expression: "!('banned' in user.groups)", Message: "banned"}}
	auths := []*Authenticator{readyFor(f, plain), readyFor(f, withCEL)}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		var extra oidctest.Claims
		if json.Unmarshal(raw, &extra) != nil {
			return
		}
		claims := p.Claims("capstan", nil)
		for k, v := range extra {
			claims[k] = v
		}
		token := p.Sign(t, claims)
		resp, ok, err := auths[int(which)%len(auths)].AuthenticateToken(context.Background(), token)
		if !ok {
			return
		}
		// An empty username claim gives an empty name, as kube's does
		// (only an expression's empty result is refused).
		if err != nil || claims["iss"] != p.URL {
			t.Fatalf("claims %v accepted as %+v (%v)", claims, resp, err)
		}
		now := float64(time.Now().Unix())
		if exp, isNum := number(claims["exp"]); !isNum || exp < now-60 {
			t.Fatalf("claims %v accepted with exp %v", claims, claims["exp"])
		}
		if nbf, isNum := number(claims["nbf"]); isNum && nbf > now+120 {
			t.Fatalf("claims %v accepted before nbf", claims)
		}
	})
}

// number is a numeric claim: int64 when set by oidctest, float64 when
// decoded from the fuzzer's JSON.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// readyFor is an Authenticator of one issuer, once its discovery is done.
func readyFor(tb testing.TB, ja apiserver.JWTAuthenticator) *Authenticator {
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	a, err := New(ctx, &Config{JWT: []apiserver.JWTAuthenticator{ja}}, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := a.current.Load().waitHealthy(ctx, time.Minute); err != nil {
		tb.Fatal(err)
	}
	return a
}

// FuzzConfig: any AuthenticationConfiguration file decodes and validates,
// or is refused with an error, never a panic.
func FuzzConfig(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer:\n    url: https://issuer.example.com\n    audiences: [a]\n  claimMappings:\n    username: {claim: sub, prefix: ''}\n",
		"apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: 'https://x', audiences: [a, b], audienceMatchPolicy: MatchAny}\n  claimMappings:\n    username: {expression: 'claims.sub'}\n    extra: [{key: 'example.com/k', valueExpression: 'claims.x'}]\n  claimValidationRules: [{expression: 'claims.x', message: m}]\n  userValidationRules: [{expression: 'user.username.startsWith(\"a\")'}]\n",
		`{"apiVersion":"apiserver.config.k8s.io/v1alpha1","kind":"AuthenticationConfiguration","anonymous":{"enabled":true,"conditions":[{"path":"/livez"}]}}`,
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: 'http://x#y', discoveryURL: '://', certificateAuthority: 'junk'}\n",
		"kind: AuthenticationConfiguration\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		if err != nil {
			return
		}
		_ = Validate(c, []string{"https://kubernetes.default.svc"})
	})
}
