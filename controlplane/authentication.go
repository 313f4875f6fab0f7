package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

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
	// ServiceAccountExtendExpiration is --service-account-extend-token-expiration:
	// a pod's token asked for with the kubelet's default lifetime is valid
	// for a year, and its use past that lifetime is audited as stale.
	ServiceAccountExtendExpiration bool
	// ServiceAccountJWKSURI is the jwks_uri of the discovery document;
	// https://<ExternalAddress>/openid/v1/jwks when empty.
	ServiceAccountJWKSURI string
	ExternalAddress       string
	Logger                *slog.Logger

	// BootstrapTokens is --enable-bootstrap-token-auth.
	BootstrapTokens bool
	// JWT authenticates the tokens of OpenID Connect issuers (--oidc-*,
	// --authentication-config); nil for none.
	JWT authn.TokenAuthenticator
	// Webhook, when its KubeconfigFile is set, is the token webhook
	// (--authentication-token-webhook-*); WebhookCacheTTL keeps its answers.
	Webhook         authn.WebhookOptions
	WebhookCacheTTL time.Duration
	// Trust is what the extension-apiserver-authentication ConfigMap
	// publishes.
	Trust ClusterAuthenticationTrust
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

	signer           *authn.TokenSigner // nil without service account tokens
	legacySigner     *authn.TokenSigner // the legacy issuer's, for token secrets
	maxExpiration    time.Duration
	extendExpiration bool
	getter           *saGetter
	// secrets labels the secrets of legacy tokens once the server runs.
	secrets atomic.Pointer[kubernetes.Clientset]
	trust   ClusterAuthenticationTrust
	// The OIDC discovery documents; nil when not served.
	openIDConfig, jwks []byte
}

// NewAuthentication builds the token authenticators of cfg.
func NewAuthentication(cfg AuthenticationConfig) (*Authentication, error) {
	a := &Authentication{APIAudiences: slices.Clone(cfg.APIAudiences), maxExpiration: cfg.ServiceAccountMaxExpiration,
		extendExpiration: cfg.ServiceAccountExtendExpiration, getter: &saGetter{}, trust: cfg.Trust}
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
		legacy, err := authn.NewLegacyServiceAccountToken(authn.LegacyServiceAccountTokenOptions{
			Keys: keys, ImplicitAudiences: a.APIAudiences, Getter: a.getter, MarkUsed: a.markLegacyTokenUsed, Logger: cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, legacy)
		if a.signer, err = authn.NewTokenSigner(cfg.ServiceAccountIssuers[0], signingKey); err != nil {
			return nil, fmt.Errorf("--service-account-signing-key-file: %w", err)
		}
		if a.legacySigner, err = authn.NewTokenSigner(authn.LegacyIssuer, signingKey); err != nil {
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
	if cfg.BootstrapTokens {
		bootstrap := authn.NewBootstrapToken(func(ctx context.Context, name string) (*corev1.Secret, error) {
			return a.getter.GetSecret(ctx, metav1.NamespaceSystem, name)
		}, cfg.Logger, nil)
		tokens = append(tokens, authn.AudienceAgnostic(a.APIAudiences, bootstrap))
	}
	// After service account tokens, as kube: both are JWTs, and a token the
	// OIDC authenticator does not know may make it fetch its issuer's keys.
	if cfg.JWT != nil {
		tokens = append(tokens, authn.AudienceAgnostic(a.APIAudiences, cfg.JWT))
	}
	if cfg.Webhook.KubeconfigFile != "" {
		webhook, err := newWebhookToken(cfg.Webhook, a.APIAudiences, cfg.WebhookCacheTTL)
		if err != nil {
			return nil, fmt.Errorf("--authentication-token-webhook-config-file: %w", err)
		}
		tokens = append(tokens, webhook)
	}
	if len(tokens) > 0 {
		a.Tokens = authn.NewCachedToken(authn.UnionTokens(tokens...), authn.TokenCacheOptions{
			SuccessTTL: authn.TokenSuccessCacheTTL, FailureTTL: authn.TokenFailureCacheTTL, CacheErrors: true,
		})
	}
	return a, nil
}

// newWebhookToken is the token webhook behind its own cache, which keeps
// successes and refusals (not errors) for ttl, as kube's.
func newWebhookToken(o authn.WebhookOptions, apiAudiences []string, ttl time.Duration) (authn.TokenAuthenticator, error) {
	o.ImplicitAudiences = apiAudiences
	webhook, err := authn.NewWebhookToken(o)
	if err != nil {
		return nil, err
	}
	return authn.NewCachedToken(webhook, authn.TokenCacheOptions{SuccessTTL: ttl, FailureTTL: ttl}), nil
}

// markLegacyTokenUsed labels the secret of a legacy token with the day it
// was used, through the API (so it is audited and watched like any write);
// the UID in the patch makes it fail on a secret recreated meanwhile.
func (a *Authentication) markLegacyTokenUsed(ctx context.Context, secret *corev1.Secret, today string) error {
	client := a.secrets.Load()
	if client == nil {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": secret.UID, "labels": map[string]string{authn.LegacyTokenLastUsedLabel: today},
	}})
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Secrets(secret.Namespace).Patch(ctx, secret.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
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
		{Name: "selfsubjectreviews", Kind: "SelfSubjectReview", Storage: authentication.SelfSubjectReviewREST{}},
	}
	review := authentication.TokenReviewREST{}
	if a := c.Authentication; a != nil {
		review.APIAudiences = a.APIAudiences
		if a.Tokens != nil {
			review.Authenticator = authn.WithAuthenticatedGroup(authn.NewBearerToken(a.Tokens, nil))
		}
	}
	resources = append(resources, endpoints.Resource{Name: "tokenreviews", Kind: "TokenReview", Storage: review})
	return builtGroup{group: endpoints.APIGroup{
		Name: authenticationv1.GroupName, Priority: priorityAuthentication,
		Versions: []endpoints.GroupVersion{{Version: "v1", Resources: resources}},
	}}
}
