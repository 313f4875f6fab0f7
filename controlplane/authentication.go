package controlplane

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/capstan-io/capstan/apis/authentication"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/endpoints"
)

// priorityAuthentication orders authentication.k8s.io in /apis, as kube.
const priorityAuthentication = 17700

// AuthenticationConfig is what the token authenticators are built from.
type AuthenticationConfig struct {
	// TokenAuthFile is --token-auth-file ("" for none).
	TokenAuthFile string
	// ServiceAccountIssuers is --service-account-issuer: the first is the
	// iss of issued tokens, all are accepted. Empty: no service account
	// tokens.
	ServiceAccountIssuers []string
	// APIAudiences is --api-audiences, the issuers when empty.
	APIAudiences []string
	// ServiceAccountKeyFiles verify tokens (--service-account-key-file);
	// the signing key's public key when empty.
	ServiceAccountKeyFiles []string
	// ServiceAccountSigningKeyFile signs tokens; when empty a key is
	// generated in CertDir.
	ServiceAccountSigningKeyFile string
	CertDir                      string
	// ServiceAccountMaxExpiration caps the tokens' validity (0: no cap).
	ServiceAccountMaxExpiration time.Duration
	// ServiceAccountJWKSURI is the jwks_uri of the discovery document;
	// https://<ExternalAddress>/openid/v1/jwks when empty.
	ServiceAccountJWKSURI string
	ExternalAddress       string
	Logger                *slog.Logger
}

// Authentication is the token authentication of the server chain: the
// authenticators of bearer tokens in kube's order (static tokens, then
// service account tokens), to be set in the generic config, and what the
// kube server needs to issue and review tokens.
type Authentication struct {
	// Tokens authenticates bearer tokens; nil when there are none to
	// authenticate.
	Tokens authn.TokenAuthenticator
	// APIAudiences are the server's own audiences (--api-audiences).
	APIAudiences []string

	signer        *authn.TokenSigner // nil without service account tokens
	maxExpiration time.Duration
	getter        *saGetter
	// The OIDC discovery documents; nil when not served.
	openIDConfig, jwks []byte
}

// NewAuthentication builds the token authenticators of cfg.
func NewAuthentication(cfg AuthenticationConfig) (*Authentication, error) {
	a := &Authentication{APIAudiences: slices.Clone(cfg.APIAudiences), maxExpiration: cfg.ServiceAccountMaxExpiration, getter: &saGetter{}}
	if len(a.APIAudiences) == 0 {
		a.APIAudiences = slices.Clone(cfg.ServiceAccountIssuers)
	}
	var tokens []authn.TokenAuthenticator
	if cfg.TokenAuthFile != "" {
		t, err := authn.NewTokenFile(cfg.TokenAuthFile, cfg.Logger)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		tokens = append(tokens, authn.AudienceAgnostic(a.APIAudiences, t))
	}
	if len(cfg.ServiceAccountIssuers) > 0 {
		signingKey, keys, err := loadServiceAccountKeys(cfg.ServiceAccountSigningKeyFile, cfg.ServiceAccountKeyFiles, cfg.CertDir)
		if err != nil {
			return nil, err
		}
		if a.signer, err = authn.NewTokenSigner(cfg.ServiceAccountIssuers[0], signingKey); err != nil {
			return nil, fmt.Errorf("--service-account-signing-key-file: %w", err)
		}
		sa, err := authn.NewServiceAccountToken(authn.ServiceAccountTokenOptions{
			Issuers: cfg.ServiceAccountIssuers, Keys: keys, ImplicitAudiences: a.APIAudiences, Getter: a.getter,
		})
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, sa)
		a.openIDConfig, a.jwks, err = openIDDocuments(cfg.ServiceAccountIssuers[0], cfg.ServiceAccountJWKSURI, cfg.ExternalAddress, keys)
		if err != nil {
			return nil, fmt.Errorf("service account issuer discovery: %w", err)
		}
		if a.openIDConfig == nil && cfg.Logger != nil {
			cfg.Logger.Warn("not serving the service account issuer discovery documents: the issuer is not an https URL", "issuer", cfg.ServiceAccountIssuers[0])
		}
	}
	if len(tokens) > 0 {
		a.Tokens = authn.UnionTokens(tokens...)
	}
	return a, nil
}

// ValidateServiceAccountMaxExpiration checks --service-account-max-token-expiration
// as kube does: 0, or between an hour and 2^32 seconds.
func ValidateServiceAccountMaxExpiration(d time.Duration) error {
	if d != 0 && (d < time.Hour || d > time.Duration(maxTokenExpirationSeconds)*time.Second) {
		return errors.New("the service-account-max-token-expiration must be between 1 hour and 2^32 seconds")
	}
	return nil
}

// authenticationGroup is authentication.k8s.io/v1: reviews, not stored.
func (c Config) authenticationGroup() builtGroup {
	resources := []endpoints.Resource{
		{Name: "selfsubjectreviews", Kind: "SelfSubjectReview", Storage: authentication.SelfSubjectReviewREST{}, NoFieldManager: true},
	}
	review := authentication.TokenReviewREST{}
	if a := c.Authentication; a != nil {
		review.APIAudiences = a.APIAudiences
		if a.Tokens != nil {
			review.Authenticator = authn.WithAuthenticatedGroup(authn.NewBearerToken(a.Tokens, nil))
		}
	}
	resources = append(resources, endpoints.Resource{Name: "tokenreviews", Kind: "TokenReview", Storage: review, NoFieldManager: true})
	return builtGroup{group: endpoints.APIGroup{
		Name: authenticationv1.GroupName, Priority: priorityAuthentication,
		Versions: []endpoints.GroupVersion{{Version: "v1", Resources: resources}},
	}}
}
