package app

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/controlplane"
)

// AuthenticationOptions are kube's "authentication" section.
type AuthenticationOptions struct {
	AnonymousAuth bool
	ClientCAFile  string
	TokenAuthFile string
	APIAudiences  []string
	// ServiceAccounts are the --service-account-* flags.
	ServiceAccounts ServiceAccountOptions
	// Authn are the front proxy, bootstrap token and token webhook flags.
	Authn AuthnOptions
	// JWT are --authentication-config and the --oidc-* flags.
	JWT JWTOptions
}

// ServiceAccountOptions are the --service-account-* flags.
type ServiceAccountOptions struct {
	Issuers          []string
	KeyFiles         []string
	SigningKeyFile   string
	MaxExpiration    time.Duration
	ExtendExpiration bool
	Lookup           bool
	JWKSURI          string
	SigningEndpoint  string
}

// NewAuthenticationOptions returns kube's defaults.
func NewAuthenticationOptions() AuthenticationOptions {
	return AuthenticationOptions{
		AnonymousAuth: true, Authn: NewAuthnOptions(), JWT: NewJWTOptions(),
		ServiceAccounts: ServiceAccountOptions{ExtendExpiration: true, Lookup: true},
	}
}

// AddFlags registers the section's flags.
func (o *AuthenticationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth, "Enables anonymous requests to the secure port: requests no other authenticator "+
		"rejects are treated as anonymous (user system:anonymous, group system:unauthenticated).")
	fs.StringSliceVar(&o.APIAudiences, "api-audiences", o.APIAudiences, "Identifiers of the API. Tokens used against the API must be bound to at least one of these audiences. "+
		"Defaults to --service-account-issuer.")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "If set, a request presenting a client certificate signed by one of the authorities "+
		"in this file is authenticated as the certificate's CommonName (user) and Organizations (groups).")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "If set, the file of static bearer tokens (CSV: token,user,uid,\"group1,group2\") accepted on the secure port.")
	o.ServiceAccounts.AddFlags(fs)
	o.Authn.AddFlags(fs)
	o.JWT.AddFlags(fs)
}

// AddFlags registers the --service-account-* flags.
func (o *ServiceAccountOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.Issuers, "service-account-issuer", o.Issuers, "Identifier of the service account token issuer: the iss claim of issued tokens, "+
		"and the URL of the discovery document at {service-account-issuer}/.well-known/openid-configuration. May be given more than once: the first issues tokens, all are accepted.")
	fs.StringArrayVar(&o.KeyFiles, "service-account-key-file", o.KeyFiles, "File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify service account tokens. "+
		"May be given more than once. Defaults to the public key of --service-account-signing-key-file.")
	fs.DurationVar(&o.MaxExpiration, "service-account-max-token-expiration", o.MaxExpiration, "The maximum validity duration of a token created by the service account token issuer. "+
		"Longer TokenRequests are shortened to it (0: no maximum).")
	fs.BoolVar(&o.ExtendExpiration, "service-account-extend-token-expiration", o.ExtendExpiration, "Turns on projected service account expiration extension during token generation, "+
		"which helps safe transition from legacy token to bound service account token feature.")
	fs.BoolVar(&o.Lookup, "service-account-lookup", o.Lookup, "If true, validate ServiceAccount tokens exist in etcd as part of authentication.")
	fs.StringVar(&o.JWKSURI, "service-account-jwks-uri", o.JWKSURI, "Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration.")
}

// AddMiscFlags registers the signing flags, which kube lists among its
// misc flags.
func (o *ServiceAccountOptions) AddMiscFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.SigningKeyFile, "service-account-signing-key-file", o.SigningKeyFile, "Path to the file that contains the current private key of the service account token issuer. "+
		"Without it capstan generates one in --cert-dir ("+controlplane.ServiceAccountKeyName+").")
	fs.StringVar(&o.SigningEndpoint, "service-account-signing-endpoint", o.SigningEndpoint, "Path to the socket of an external JWT signer (a unix domain socket). "+
		"Excludes --service-account-signing-key-file and --service-account-key-file.")
}

// Validate reports what is wrong with the section, with kube's messages.
func (o *AuthenticationOptions) Validate() error {
	errs := []error{o.ServiceAccounts.Validate(), o.Authn.Validate(), o.JWT.Validate()}
	return errors.Join(errs...)
}

// Validate reports kube's errors for the --service-account-* flags, and
// capstan's for the ones it does not implement.
func (o *ServiceAccountOptions) Validate() error {
	var errs []error
	if err := controlplane.ValidateServiceAccountMaxExpiration(o.MaxExpiration); err != nil {
		errs = append(errs, err)
	}
	for i, iss := range o.Issuers {
		switch {
		case iss == "":
			errs = append(errs, errors.New("service-account-issuer should not be an empty string"))
		case slices.Contains(o.Issuers[:i], iss):
			errs = append(errs, fmt.Errorf("service-account-issuer %q is already specified", iss))
		case strings.Contains(iss, ":"):
			if _, err := url.Parse(iss); err != nil {
				errs = append(errs, fmt.Errorf("service-account-issuer %q contained a ':' but was not a valid URL: %v", iss, err))
			}
		}
	}
	if o.SigningEndpoint != "" {
		errs = append(errs, errors.New("--service-account-signing-endpoint: capstan does not implement external JWT signers yet; use --service-account-signing-key-file"))
	}
	if !o.Lookup {
		errs = append(errs, errors.New("--service-account-lookup=false: capstan always checks that a token's service account (and secret or pod) still exists"))
	}
	return errors.Join(errs...)
}
