package jwt

import (
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/fieldtest"
)

// valid is a minimal valid jwt authenticator; tests change one part.
func valid() apiserver.JWTAuthenticator {
	return apiserver.JWTAuthenticator{
		Issuer:        apiserver.Issuer{URL: "https://issuer.example.com", Audiences: []string{"capstan"}},
		ClaimMappings: apiserver.ClaimMappings{Username: apiserver.PrefixedClaimOrExpression{Claim: "sub", Prefix: ptr.To("")}},
	}
}

func with(change func(*apiserver.JWTAuthenticator)) apiserver.JWTAuthenticator {
	a := valid()
	change(&a)
	return a
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		jwt  []apiserver.JWTAuthenticator
		anon *apiserver.AnonymousAuthConfig
		sa   []string
		want []fieldtest.Want
	}{
		{name: "valid", jwt: []apiserver.JWTAuthenticator{valid()}},
		{name: "none", jwt: nil},
		{name: "no url", jwt: []apiserver.JWTAuthenticator{with(func(a *apiserver.JWTAuthenticator) { a.Issuer.URL = "" })},
			want: []fieldtest.Want{fieldtest.Required("jwt[0].issuer.url")}},
		{name: "http url with user, query and fragment", jwt: []apiserver.JWTAuthenticator{with(func(a *apiserver.JWTAuthenticator) {
			a.Issuer.URL = "http://u:p@x.example.com?q=1#f"
		})}, want: []fieldtest.Want{fieldtest.Invalid("jwt[0].issuer.url"), fieldtest.Invalid("jwt[0].issuer.url"),
			fieldtest.Invalid("jwt[0].issuer.url"), fieldtest.Invalid("jwt[0].issuer.url")}},
		{name: "service account issuer", sa: []string{"https://issuer.example.com"}, jwt: []apiserver.JWTAuthenticator{valid()},
			want: []fieldtest.Want{fieldtest.Invalid("jwt[0].issuer.url")}},
		{name: "discovery URL same as URL", jwt: []apiserver.JWTAuthenticator{with(func(a *apiserver.JWTAuthenticator) {
			a.Issuer.DiscoveryURL = "https://issuer.example.com/"
		})}, want: []fieldtest.Want{fieldtest.Invalid("jwt[0].issuer.discoveryURL")}},
		{name: "audiences", jwt: []apiserver.JWTAuthenticator{
			with(func(a *apiserver.JWTAuthenticator) { a.Issuer.Audiences = nil }),
			with(func(a *apiserver.JWTAuthenticator) {
				a.Issuer.URL += "/2"
				a.Issuer.Audiences = []string{"a", "a", ""}
			}),
			with(func(a *apiserver.JWTAuthenticator) {
				a.Issuer.URL += "/3"
				a.Issuer.AudienceMatchPolicy = "MatchAll"
			}),
		}, want: []fieldtest.Want{fieldtest.Required("jwt[0].issuer.audiences"), fieldtest.Duplicate("jwt[1].issuer.audiences[1]"),
			fieldtest.Required("jwt[1].issuer.audiences[2]"), fieldtest.Invalid("jwt[1].issuer.audienceMatchPolicy"),
			fieldtest.Invalid("jwt[2].issuer.audienceMatchPolicy")}},
		{name: "bad CA", jwt: []apiserver.JWTAuthenticator{with(func(a *apiserver.JWTAuthenticator) { a.Issuer.CertificateAuthority = "junk" })},
			want: []fieldtest.Want{fieldtest.Invalid("jwt[0].issuer.certificateAuthority")}},
		{name: "duplicate issuers", jwt: []apiserver.JWTAuthenticator{valid(), valid()},
			want: []fieldtest.Want{fieldtest.Duplicate("jwt[1].issuer.url")}},
		{name: "claim rules", jwt: []apiserver.JWTAuthenticator{with(func(a *apiserver.JWTAuthenticator) {
			a.ClaimValidationRules = []apiserver.ClaimValidationRule{
				{Claim: "hd", Expression: "true"},
				{},
				{Claim: "x", Message: "m"},
				{Claim: "x"},
				{Expression: "claims.x", RequiredValue: "v"},
				{Expression: "claims.x == 1"},
				{Expression: "claims.x == 1"},
				{Expression: "claims.x +"},
			}
		})}, want: []fieldtest.Want{fieldtest.Invalid("jwt[0].claimValidationRules[0]"), fieldtest.Required("jwt[0].claimValidationRules[1]"),
			fieldtest.Invalid("jwt[0].claimValidationRules[2].message"), fieldtest.Duplicate("jwt[0].claimValidationRules[3].claim"),
			fieldtest.Invalid("jwt[0].claimValidationRules[4].requiredValue"), fieldtest.Invalid("jwt[0].claimValidationRules[4].expression"),
			fieldtest.Duplicate("jwt[0].claimValidationRules[6].expression"), fieldtest.Invalid("jwt[0].claimValidationRules[7].expression")}},
		{name: "username", jwt: []apiserver.JWTAuthenticator{
			with(func(a *apiserver.JWTAuthenticator) { a.ClaimMappings.Username = apiserver.PrefixedClaimOrExpression{} }),
			with(func(a *apiserver.JWTAuthenticator) {
				a.Issuer.URL += "/2"
				a.ClaimMappings.Username.Prefix = nil
			}),
			with(func(a *apiserver.JWTAuthenticator) {
				a.Issuer.URL += "/3"
				a.ClaimMappings.Username.Expression = "claims.sub"
			}),
			with(func(a *apiserver.JWTAuthenticator) {
				a.Issuer.URL += "/4"
				a.ClaimMappings.Username = apiserver.PrefixedClaimOrExpression{Expression: "claims.sub", Prefix: ptr.To("x")}
			}),
		}, want: []fieldtest.Want{fieldtest.Required("jwt[0].claimMappings.username"), fieldtest.Required("jwt[1].claimMappings.username.prefix"),
			fieldtest.Invalid("jwt[2].claimMappings.username"), fieldtest.Invalid("jwt[3].claimMappings.username.prefix")}},
		{name: "email needs email_verified", jwt: []apiserver.JWTAuthenticator{
			with(func(a *apiserver.JWTAuthenticator) {
				a.ClaimMappings.Username = apiserver.PrefixedClaimOrExpression{Expression: "claims.email"}
			}),
			with(func(a *apiserver.JWTAuthenticator) {
				a.Issuer.URL += "/2"
				a.ClaimMappings.Username = apiserver.PrefixedClaimOrExpression{Expression: "claims.?email.orValue('')"}
			}),
			// email_verified read anywhere is enough.
			with(func(a *apiserver.JWTAuthenticator) {
				a.Issuer.URL += "/3"
				a.ClaimMappings.Username = apiserver.PrefixedClaimOrExpression{Expression: "claims.email"}
				a.ClaimValidationRules = []apiserver.ClaimValidationRule{{Expression: "claims.email_verified == true"}}
			}),
			with(func(a *apiserver.JWTAuthenticator) {
				a.Issuer.URL += "/4"
				a.ClaimMappings.Username = apiserver.PrefixedClaimOrExpression{Expression: "claims.email_verified ? claims.email : ''"}
			}),
		}, want: []fieldtest.Want{fieldtest.Invalid("jwt[0].claimMappings.username.expression"), fieldtest.Invalid("jwt[1].claimMappings.username.expression")}},
		{name: "groups and uid", jwt: []apiserver.JWTAuthenticator{with(func(a *apiserver.JWTAuthenticator) {
			a.ClaimMappings.Groups = apiserver.PrefixedClaimOrExpression{Claim: "groups"}
			a.ClaimMappings.UID = apiserver.ClaimOrExpression{Claim: "uid", Expression: "claims.uid"}
		})}, want: []fieldtest.Want{fieldtest.Required("jwt[0].claimMappings.groups.prefix"), fieldtest.Invalid("jwt[0].claimMappings.uid")}},
		{name: "extra", jwt: []apiserver.JWTAuthenticator{with(func(a *apiserver.JWTAuthenticator) {
			a.ClaimMappings.Extra = []apiserver.ExtraMapping{
				{Key: "example.com/a", ValueExpression: "claims.a"},
				{Key: "example.com/a", ValueExpression: "claims.a"},
				{Key: "nodomain", ValueExpression: "claims.a"},
				{Key: "Example.com/b", ValueExpression: "claims.a"},
				{Key: "sub.k8s.io/c", ValueExpression: "claims.a"},
				{Key: "example.com/d"},
				{Key: "example.com/e", ValueExpression: "claims.("},
			}
		})}, want: []fieldtest.Want{fieldtest.Duplicate("jwt[0].claimMappings.extra[1].key"), fieldtest.Invalid("jwt[0].claimMappings.extra[2].key"),
			fieldtest.Invalid("jwt[0].claimMappings.extra[3].key"), fieldtest.Invalid("jwt[0].claimMappings.extra[3].key"),
			fieldtest.Invalid("jwt[0].claimMappings.extra[4].key"), fieldtest.Required("jwt[0].claimMappings.extra[5].valueExpression"),
			fieldtest.Invalid("jwt[0].claimMappings.extra[6].valueExpression")}},
		{name: "user rules", jwt: []apiserver.JWTAuthenticator{with(func(a *apiserver.JWTAuthenticator) {
			a.UserValidationRules = []apiserver.UserValidationRule{
				{},
				{Expression: "user.username != ''"},
				{Expression: "user.username != ''"},
				{Expression: "user.username"},
				{Expression: "claims.sub == ''"},
			}
		})}, want: []fieldtest.Want{fieldtest.Required("jwt[0].userValidationRules[0].expression"), fieldtest.Duplicate("jwt[0].userValidationRules[2].expression"),
			fieldtest.Invalid("jwt[0].userValidationRules[3].expression"), fieldtest.Invalid("jwt[0].userValidationRules[4].expression")}},
		{name: "anonymous conditions while disabled", anon: &apiserver.AnonymousAuthConfig{Conditions: []apiserver.AnonymousAuthCondition{{Path: "/livez"}}},
			want: []fieldtest.Want{fieldtest.Invalid("anonymous.conditions")}},
		{name: "anonymous", anon: &apiserver.AnonymousAuthConfig{Enabled: true, Conditions: []apiserver.AnonymousAuthCondition{{Path: "/livez"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fieldtest.Check(t, Validate(&Config{JWT: tc.jwt, Anonymous: tc.anon}, tc.sa), tc.want...)
		})
	}
}

func TestValidateTooManyIssuers(t *testing.T) {
	c := &Config{}
	for range maxIssuers + 1 {
		c.JWT = append(c.JWT, valid())
	}
	fieldtest.Check(t, Validate(c, nil), fieldtest.Want{Type: "FieldValueTooMany", Field: "jwt"})
}

// TestValidateMessages: the details kube prints, for the errors whose
// words matter most to users.
func TestValidateMessages(t *testing.T) {
	for _, tc := range []struct {
		a    apiserver.JWTAuthenticator
		want string
	}{
		{with(func(a *apiserver.JWTAuthenticator) { a.Issuer.URL = "http://x" }), `jwt[0].issuer.url: Invalid value: "http://x": URL scheme must be https`},
		{with(func(a *apiserver.JWTAuthenticator) { a.Issuer.Audiences = nil }), `jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required`},
		{with(func(a *apiserver.JWTAuthenticator) {
			a.ClaimValidationRules = []apiserver.ClaimValidationRule{{Expression: "claims.x"}}
		}),
			`jwt[0].claimValidationRules[0].expression: Invalid value: "claims.x": must evaluate to bool`},
		{with(func(a *apiserver.JWTAuthenticator) { a.ClaimMappings.Username.Prefix = nil }),
			`jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing`},
		{with(func(a *apiserver.JWTAuthenticator) {
			a.ClaimMappings.Groups = apiserver.PrefixedClaimOrExpression{Expression: "claims.groups +"}
		}), "jwt[0].claimMappings.groups.expression: Invalid value: \"claims.groups +\": compilation failed: ERROR: <input>:1:16: Syntax error: mismatched input '<EOF>' expecting"},
	} {
		got := Validate(&Config{JWT: []apiserver.JWTAuthenticator{tc.a}}, nil).ToAggregate()
		if got == nil || !strings.HasPrefix(got.Error(), tc.want) {
			t.Errorf("error:\n got %v\nwant %s", got, tc.want)
		}
	}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, data, wantErr string
	}{
		{"v1", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt: []\n", ""},
		{"v1beta1", "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\n", ""},
		{"v1alpha1", "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthenticationConfiguration\n", ""},
		{"json", `{"apiVersion":"apiserver.config.k8s.io/v1","kind":"AuthenticationConfiguration","anonymous":{"enabled":true}}`, ""},
		{"empty", "", "empty config data"},
		{"unknown field", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nfoo: 1\n", `strict decoding error: unknown field "foo"`},
		{"other kind", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n", "expected AuthenticationConfiguration, got *apiserver.AuthorizationConfiguration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.data))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestFromLegacyFlags(t *testing.T) {
	for _, tc := range []struct {
		claim, prefix, want string
	}{
		{"sub", "", "https://issuer.example.com#"},
		{"email", "", ""},
		{"sub", "-", ""},
		{"email", "oidc:", "oidc:"},
	} {
		c, err := FromLegacyFlags(LegacyFlags{IssuerURL: "https://issuer.example.com", ClientID: "capstan", UsernameClaim: tc.claim, UsernamePrefix: tc.prefix,
			RequiredClaims: map[string]string{"b": "2", "a": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		a := c.JWT[0]
		if got := *a.ClaimMappings.Username.Prefix; got != tc.want || a.ClaimMappings.Username.Claim != tc.claim {
			t.Errorf("claim %s prefix %q: username mapping %s with prefix %q, want %q", tc.claim, tc.prefix, a.ClaimMappings.Username.Claim, got, tc.want)
		}
		if a.ClaimMappings.Groups.Claim != "" || len(a.ClaimValidationRules) != 2 || a.ClaimValidationRules[0].Claim != "a" {
			t.Errorf("mapping %+v, rules %+v", a.ClaimMappings, a.ClaimValidationRules)
		}
		if errs := Validate(c, nil); len(errs) > 0 {
			t.Errorf("flags give an invalid configuration: %v", errs)
		}
	}
}
