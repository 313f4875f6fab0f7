// Package jwt authenticates JSON Web Tokens of OpenID Connect issuers, as
// --oidc-* flags or an AuthenticationConfiguration file (--authentication-config)
// configure them: discovery and key sets of each issuer, claim validation,
// claim mappings to users (claims or CEL), user validation, and the file's
// reload.
package jwt

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/install"
)

// Config is an AuthenticationConfiguration, in the internal form of
// k8s.io/apiserver's types every version of the file converts to.
type Config = apiserver.AuthenticationConfiguration

var codecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	install.Install(s)
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
}()

// LoadFile reads and decodes an AuthenticationConfiguration file, and
// returns it with the file's content.
func LoadFile(path string) (*Config, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	c, err := Decode(data)
	return c, data, err
}

// Decode decodes an AuthenticationConfiguration of any version kube knows
// (apiserver.config.k8s.io/v1, v1beta1, v1alpha1), in JSON or YAML,
// strictly: unknown and duplicate fields are errors.
func Decode(data []byte) (*Config, error) {
	if len(data) == 0 {
		return nil, errors.New("empty config data")
	}
	obj, err := runtime.Decode(codecs.UniversalDecoder(), data)
	if err != nil {
		return nil, err
	}
	c, ok := obj.(*Config)
	if !ok {
		return nil, fmt.Errorf("expected AuthenticationConfiguration, got %T", obj)
	}
	return c, nil
}

// LegacyFlags are the --oidc-* flags.
type LegacyFlags struct {
	IssuerURL      string
	ClientID       string
	CAFile         string
	UsernameClaim  string
	UsernamePrefix string
	GroupsClaim    string
	GroupsPrefix   string
	RequiredClaims map[string]string
}

// FromLegacyFlags is the one-issuer configuration the --oidc-* flags stand
// for, as kube builds it: usernames of claims other than email are
// prefixed with "<issuer>#" unless --oidc-username-prefix says otherwise
// ("-" for no prefix).
func FromLegacyFlags(f LegacyFlags) (*Config, error) {
	prefix := f.UsernamePrefix
	if prefix == "" && f.UsernameClaim != "email" {
		prefix = f.IssuerURL + "#"
	}
	if prefix == "-" {
		prefix = ""
	}
	a := apiserver.JWTAuthenticator{
		Issuer: apiserver.Issuer{URL: f.IssuerURL, Audiences: []string{f.ClientID}},
		ClaimMappings: apiserver.ClaimMappings{
			Username: apiserver.PrefixedClaimOrExpression{Claim: f.UsernameClaim, Prefix: &prefix},
		},
	}
	if f.GroupsClaim != "" {
		groupsPrefix := f.GroupsPrefix
		a.ClaimMappings.Groups = apiserver.PrefixedClaimOrExpression{Claim: f.GroupsClaim, Prefix: &groupsPrefix}
	}
	if f.CAFile != "" {
		ca, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, err
		}
		a.Issuer.CertificateAuthority = string(ca)
	}
	for _, claim := range slices.Sorted(maps.Keys(f.RequiredClaims)) {
		value := f.RequiredClaims[claim]
		a.ClaimValidationRules = append(a.ClaimValidationRules, apiserver.ClaimValidationRule{Claim: claim, RequiredValue: value})
	}
	return &Config{JWT: []apiserver.JWTAuthenticator{a}}, nil
}
