package jwt

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/apis/apiserver"
	certutil "k8s.io/client-go/util/cert"

	"github.com/capstan-io/capstan/authn"
)

// SigningAlgorithms are the JOSE algorithms kube accepts: asymmetric only.
var SigningAlgorithms = []string{
	oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.RS256, oidc.RS384, oidc.RS512,
}

// discoveryRetry is how often kube retries an issuer's discovery until it
// answers.
const discoveryRetry = 10 * time.Second

// nbfLeeway is how far in the future a token's nbf may be, as kube's
// verifier allows.
const nbfLeeway = time.Minute

// issuer authenticates the tokens of one jwt authenticator of the file.
// It knows its keys once the issuer's discovery document and key set were
// fetched (in the background, retried until they are); until then its
// tokens fail.
type issuer struct {
	config    apiserver.JWTAuthenticator
	compiled  *compiled
	audiences sets.Set[string]
	required  []apiserver.ClaimValidationRule // claim rules, in file order
	now       func() time.Time

	verifier atomic.Pointer[oidc.IDTokenVerifier]
	health   atomic.Pointer[error]
	ready    chan struct{} // closed once verifier is set
}

func newIssuer(ctx context.Context, a apiserver.JWTAuthenticator, c *compiled, algs []string, logger *slog.Logger) (*issuer, error) {
	for _, alg := range algs {
		if !slices.Contains(SigningAlgorithms, alg) {
			return nil, fmt.Errorf("oidc: unsupported signing alg: %q", alg)
		}
	}
	if len(algs) == 0 {
		algs = []string{oidc.RS256}
	}
	client, err := issuerClient(a.Issuer)
	if err != nil {
		return nil, err
	}
	iss := &issuer{config: a, compiled: c, audiences: sets.New(a.Issuer.Audiences...), now: time.Now, ready: make(chan struct{})}
	for _, r := range a.ClaimValidationRules {
		if r.Claim != "" {
			iss.required = append(iss.required, r)
		}
	}
	notYet := fmt.Errorf("oidc: authenticator for issuer %q is not initialized", a.Issuer.URL)
	iss.health.Store(&notYet)
	vc := &oidc.Config{SupportedSigningAlgs: algs, Now: iss.now}
	if len(a.Issuer.Audiences) == 1 {
		vc.ClientID = a.Issuer.Audiences[0]
	} else {
		// go-oidc checks a single client ID; several audiences are ours to check.
		vc.SkipClientIDCheck = true
	}
	ctx = oidc.ClientContext(ctx, client)
	go iss.discover(ctx, vc, logger)
	return iss, nil
}

// issuerClient is the HTTP client of discovery and key fetches: the
// issuer's certificate authority (the host's roots without one), and the
// discovery URL in place of <url>/.well-known/openid-configuration.
func issuerClient(iss apiserver.Issuer) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if iss.CertificateAuthority != "" {
		roots, err := certutil.NewPoolFromBytes([]byte(iss.CertificateAuthority))
		if err != nil {
			return nil, fmt.Errorf("Failed to read the CA contents: %v", err)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	if iss.DiscoveryURL != "" {
		u, err := url.Parse(iss.DiscoveryURL)
		if err != nil {
			return nil, fmt.Errorf("oidc: invalid discovery URL: %w", err)
		}
		client.Transport = &discoveryRewrite{base: tr, to: u, from: strings.TrimSuffix(iss.URL, "/") + "/.well-known/openid-configuration"}
	}
	return client, nil
}

type discoveryRewrite struct {
	base http.RoundTripper
	to   *url.URL
	from string
}

func (t *discoveryRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.URL.String() == t.from {
		r = r.Clone(r.Context())
		r.Host = ""
		r.URL = t.to
	}
	return t.base.RoundTrip(r)
}

// discover fetches the discovery document until it succeeds or ctx ends;
// the verifier then fetches the key set, again whenever a token names a
// key it does not know (key rotation).
func (iss *issuer) discover(ctx context.Context, vc *oidc.Config, logger *slog.Logger) {
	t := time.NewTicker(discoveryRetry)
	defer t.Stop()
	for {
		p, err := oidc.NewProvider(ctx, iss.config.Issuer.URL)
		if err == nil {
			iss.verifier.Store(p.VerifierContext(ctx, vc))
			iss.health.Store(new(error))
			close(iss.ready)
			return
		}
		if ctx.Err() != nil {
			return
		}
		if logger != nil {
			logger.Error("oidc authenticator: initializing plugin", "issuer", iss.config.Issuer.URL, "err", err)
		}
		iss.health.Store(&err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// healthy is nil once the issuer's discovery document was fetched.
func (iss *issuer) healthy() error {
	if err := *iss.health.Load(); err != nil {
		return fmt.Errorf("oidc: authenticator for issuer %q is not healthy: %w", iss.config.Issuer.URL, err)
	}
	return nil
}

// AuthenticateToken has no opinion of tokens of other issuers (by their
// unverified iss claim); a token of this issuer is verified (signature,
// expiry, nbf, audiences), its claims mapped to a user and the rules
// checked, each failure an error.
func (iss *issuer) AuthenticateToken(ctx context.Context, token string) (*authn.Response, bool, error) {
	if unverifiedIssuer(token) != iss.config.Issuer.URL {
		return nil, false, nil
	}
	v := iss.verifier.Load()
	if v == nil {
		return nil, false, errors.New("oidc: authenticator not initialized")
	}
	idToken, err := v.Verify(ctx, token)
	if err == nil {
		err = iss.verifyAudience(idToken.Audience)
	}
	var c claims
	if err == nil {
		err = idToken.Claims(&c)
	}
	if err == nil {
		err = iss.verifyNotBefore(c)
	}
	if err != nil {
		return nil, false, fmt.Errorf("oidc: verify token: %v", err)
	}
	u, err := iss.user(ctx, c)
	if err != nil {
		return nil, false, err
	}
	return &authn.Response{User: u}, true, nil
}

func (iss *issuer) verifyAudience(auds []string) error {
	if iss.audiences.HasAny(auds...) {
		return nil
	}
	return fmt.Errorf("oidc: expected audience in %q got %q", sets.List(iss.audiences), auds)
}

// verifyNotBefore holds kube's leeway of a minute: kube verifies with
// go-oidc v2, which allowed one, where v3 allows five. nbf is compared as
// the number it is: go-oidc converts a float claim to int64 seconds, so a
// huge one (1e20) overflows to the far past, and one near the int64 limit
// wraps around in time.Unix; both would pass its check.
func (iss *issuer) verifyNotBefore(c claims) error {
	var nbf float64
	if c.get("nbf", &nbf) != nil {
		return nil
	}
	now := iss.now()
	if nbf <= float64(now.Add(nbfLeeway).Unix()) {
		return nil
	}
	return fmt.Errorf("oidc: current time %v before the nbf (not before) time: %v", now, unixTime(nbf))
}

// lastUnixSecond is the last second of year 9999, the last one a time
// prints as a date.
const lastUnixSecond = 253402300799

// unixTime prints seconds since the epoch as a time when they are one,
// and as the number otherwise.
func unixTime(secs float64) any {
	if secs > lastUnixSecond {
		return strconv.FormatFloat(secs, 'g', -1, 64)
	}
	return time.Unix(int64(secs), 0)
}

// user maps verified claims to the user and runs the validation rules, in
// kube's order.
func (iss *issuer) user(ctx context.Context, c claims) (*authn.User, error) {
	var cv traits.Mapper
	p := iss.compiled
	if p.username != nil || p.groups != nil || p.uid != nil || len(p.extra) > 0 || len(p.claimRules) > 0 {
		cv = claimsValue(c)
	}
	u := &authn.User{}
	var err error
	if u.Name, err = iss.username(ctx, c, cv); err != nil {
		return nil, err
	}
	if u.Groups, err = iss.groups(ctx, c, cv); err != nil {
		return nil, err
	}
	if u.UID, err = iss.uid(ctx, c, cv); err != nil {
		return nil, err
	}
	if u.Extra, err = iss.extra(ctx, c, cv); err != nil {
		return nil, err
	}
	for _, r := range iss.required {
		if _, ok := c[r.Claim]; !ok {
			return nil, fmt.Errorf("oidc: required claim %s not present in ID token", r.Claim)
		}
		var got string
		if err := c.get(r.Claim, &got); err != nil {
			return nil, fmt.Errorf("oidc: parse claim %s: %w", r.Claim, err)
		}
		if got != r.RequiredValue {
			return nil, fmt.Errorf("oidc: required claim %s value does not match. Got = %s, want = %s", r.Claim, got, r.RequiredValue)
		}
	}
	if err := checkRules(ctx, p.claimRules, claimsVar, cv); err != nil {
		return nil, fmt.Errorf("oidc: error evaluating claim validation expression: %w", err)
	}
	if len(p.userRules) > 0 {
		if err := checkRules(ctx, p.userRules, userVar, userValue(u)); err != nil {
			return nil, fmt.Errorf("oidc: error evaluating user info validation rule: %w", err)
		}
	}
	return u, nil
}

// checkRules evaluates every rule first, then reports the first false one.
func checkRules(ctx context.Context, rules []rule, variable string, value traits.Mapper) error {
	results := make([]any, len(rules))
	for i, r := range rules {
		v, err := r.eval(ctx, variable, value)
		if err != nil {
			return err
		}
		results[i] = v.Value()
	}
	for i, r := range rules {
		ok, isBool := results[i].(bool)
		if !isBool {
			return errors.New("validation expression must return a boolean")
		}
		if !ok {
			return fmt.Errorf("validation expression '%s' failed: %s", r.expression, r.message)
		}
	}
	return nil
}

func (iss *issuer) username(ctx context.Context, c claims, cv traits.Mapper) (string, error) {
	if p := iss.compiled.username; p != nil {
		v, err := p.eval(ctx, claimsVar, cv)
		if err != nil {
			return "", fmt.Errorf("oidc: error evaluating username claim expression: %w", err)
		}
		if v.Type() != cel.StringType {
			return "", fmt.Errorf("oidc: error evaluating username claim expression: %w", errors.New("username claim expression must return a string"))
		}
		name := v.Value().(string)
		if name == "" {
			return "", errors.New("oidc: empty username via CEL expression is not allowed")
		}
		return name, nil
	}
	m := iss.config.ClaimMappings.Username
	var name string
	if err := c.get(m.Claim, &name); err != nil {
		return "", fmt.Errorf("oidc: parse username claims %q: %v", m.Claim, err)
	}
	if m.Claim == "email" {
		// An email is the user's only when the issuer did not say it is unverified.
		if _, ok := c["email_verified"]; ok {
			var verified bool
			if err := c.get("email_verified", &verified); err != nil {
				return "", fmt.Errorf("oidc: parse 'email_verified' claim: %v", err)
			}
			if !verified {
				return "", errors.New("oidc: email not verified")
			}
		}
	}
	if m.Prefix != nil {
		name = *m.Prefix + name
	}
	return name, nil
}

func (iss *issuer) groups(ctx context.Context, c claims, cv traits.Mapper) ([]string, error) {
	m := iss.config.ClaimMappings.Groups
	if m.Claim != "" {
		if _, ok := c[m.Claim]; ok {
			var groups stringOrArray
			if err := c.get(m.Claim, &groups); err != nil {
				return nil, fmt.Errorf("oidc: parse groups claim %q: %w", m.Claim, err)
			}
			if m.Prefix != nil {
				for i := range groups {
					groups[i] = *m.Prefix + groups[i]
				}
			}
			return groups, nil
		}
	}
	p := iss.compiled.groups
	if p == nil {
		return nil, nil
	}
	v, err := p.eval(ctx, claimsVar, cv)
	if err == nil {
		var groups []string
		if groups, err = stringList(v); err == nil {
			return groups, nil
		}
	}
	return nil, fmt.Errorf("oidc: error evaluating group claim expression: %w", err)
}

func (iss *issuer) uid(ctx context.Context, c claims, cv traits.Mapper) (string, error) {
	if claim := iss.config.ClaimMappings.UID.Claim; claim != "" {
		var uid string
		if err := c.get(claim, &uid); err != nil {
			return "", fmt.Errorf("oidc: parse uid claim %q: %w", claim, err)
		}
		return uid, nil
	}
	p := iss.compiled.uid
	if p == nil {
		return "", nil
	}
	v, err := p.eval(ctx, claimsVar, cv)
	if err != nil {
		return "", fmt.Errorf("oidc: error evaluating uid claim expression: %w", err)
	}
	if v.Type() != cel.StringType {
		return "", fmt.Errorf("oidc: error evaluating uid claim expression: %w", errors.New("uid claim expression must return a string"))
	}
	return v.Value().(string), nil
}

func (iss *issuer) extra(ctx context.Context, c claims, cv traits.Mapper) (map[string][]string, error) {
	extra := map[string][]string{}
	var jti string
	if c.get("jti", &jti) == nil && jti != "" {
		extra[authn.CredentialIDKey] = []string{"JTI=" + jti}
	}
	for _, m := range iss.compiled.extra {
		v, err := m.eval(ctx, claimsVar, cv)
		if err != nil {
			return nil, err
		}
		values, err := stringList(v)
		if err != nil {
			return nil, fmt.Errorf("oidc: error evaluating extra claim expression: %s: %w", m.expression, err)
		}
		if len(values) > 0 {
			extra[m.key] = values
		}
	}
	if len(extra) == 0 {
		return nil, nil
	}
	return extra, nil
}

// claims are a token's claims, each decoded only when read.
type claims map[string]json.RawMessage

func (c claims) get(name string, v any) error {
	raw, ok := c[name]
	if !ok {
		return errors.New("claim not present")
	}
	return json.Unmarshal(raw, v)
}

// stringOrArray is a groups claim: a list of strings, or one string.
type stringOrArray []string

func (s *stringOrArray) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*s = list
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*s = []string{one}
	return nil
}

// unverifiedIssuer is the iss claim of a compact JWT, before any check
// ("" when token is not one), to pick the issuer that may verify it.
func unverifiedIssuer(token string) string {
	if strings.HasPrefix(strings.TrimSpace(token), "{") {
		return ""
	}
	iss := authn.UnverifiedIssuer(token)
	if iss == "accounts.google.com" {
		// Google's legacy iss, as OpenID Connect says to read it.
		return "https://accounts.google.com"
	}
	return iss
}
