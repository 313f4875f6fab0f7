package controlplane

import (
	"fmt"
	"log/slog"

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
	Logger        *slog.Logger
}

// Authentication is the token authentication of the server chain: the
// authenticators of bearer tokens, in kube's order, to be set in the
// generic config.
type Authentication struct {
	// Tokens authenticates bearer tokens; nil when there are none to
	// authenticate.
	Tokens authn.TokenAuthenticator
	// APIAudiences are the server's own audiences (--api-audiences).
	APIAudiences []string
}

// NewAuthentication builds the token authenticators of cfg.
func NewAuthentication(cfg AuthenticationConfig) (*Authentication, error) {
	a := &Authentication{}
	var tokens []authn.TokenAuthenticator
	if cfg.TokenAuthFile != "" {
		t, err := authn.NewTokenFile(cfg.TokenAuthFile, cfg.Logger)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		tokens = append(tokens, authn.AudienceAgnostic(a.APIAudiences, t))
	}
	if len(tokens) > 0 {
		a.Tokens = authn.UnionTokens(tokens...)
	}
	return a, nil
}

// authenticationGroup is authentication.k8s.io/v1: reviews, not stored.
func authenticationGroup() builtGroup {
	return builtGroup{group: endpoints.APIGroup{
		Name: authenticationv1.GroupName, Priority: priorityAuthentication,
		Versions: []endpoints.GroupVersion{{Version: "v1", Resources: []endpoints.Resource{
			{Name: "selfsubjectreviews", Kind: "SelfSubjectReview", Storage: authentication.SelfSubjectReviewREST{}, NoFieldManager: true},
		}}},
	}}
}
