package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/apiserver"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authn/jwt"
)

// JWTOptions are --authentication-config and the legacy --oidc-* flags,
// which configure the JWT (OpenID Connect) token authenticator, with
// kube-apiserver's names, defaults and rules.
type JWTOptions struct {
	// ConfigFile is --authentication-config: an AuthenticationConfiguration
	// file, reloaded when it changes.
	ConfigFile  string
	OIDC        jwt.LegacyFlags
	SigningAlgs []string
	// ReloadInterval is how often the file is checked for changes.
	ReloadInterval time.Duration

	oidcFlagsSet      bool // any --oidc-* flag was given
	anonymousFlagsSet bool // --anonymous-auth was given
}

// NewJWTOptions returns kube's defaults.
func NewJWTOptions() JWTOptions {
	return JWTOptions{OIDC: jwt.LegacyFlags{UsernameClaim: "sub"}, SigningAlgs: []string{"RS256"}, ReloadInterval: time.Second}
}

// AddFlags registers the flags; call it after --anonymous-auth is
// registered, which it watches for being set.
func (o *JWTOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "authentication-config", o.ConfigFile, ""+
		"File with Authentication Configuration to configure the JWT Token authenticator or the anonymous authenticator. "+
		"This flag is mutually exclusive with the --oidc-* flags if the file configures the JWT Token authenticator. "+
		"This flag is mutually exclusive with --anonymous-auth if the file configures the Anonymous authenticator.")
	fs.StringVar(&o.OIDC.IssuerURL, "oidc-issuer-url", o.OIDC.IssuerURL, "The URL of the OpenID issuer, only HTTPS scheme will be accepted. "+
		"If set, it will be used to verify the OIDC JSON Web Token (JWT).")
	fs.StringVar(&o.OIDC.ClientID, "oidc-client-id", o.OIDC.ClientID, "The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.")
	fs.StringVar(&o.OIDC.CAFile, "oidc-ca-file", o.OIDC.CAFile, "If set, the OpenID server's certificate will be verified by one of the authorities "+
		"in the oidc-ca-file, otherwise the host's root CA set will be used.")
	fs.StringVar(&o.OIDC.UsernameClaim, "oidc-username-claim", o.OIDC.UsernameClaim, "The OpenID claim to use as the user name. Note that claims other than the default ('sub') "+
		"is not guaranteed to be unique and immutable.")
	fs.StringVar(&o.OIDC.UsernamePrefix, "oidc-username-prefix", o.OIDC.UsernamePrefix, "If provided, all usernames will be prefixed with this value. If not provided, "+
		"username claims other than 'email' are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'.")
	fs.StringVar(&o.OIDC.GroupsClaim, "oidc-groups-claim", o.OIDC.GroupsClaim, "If provided, the name of a custom OpenID Connect claim for specifying user groups. "+
		"The claim value is expected to be a string or array of strings.")
	fs.StringVar(&o.OIDC.GroupsPrefix, "oidc-groups-prefix", o.OIDC.GroupsPrefix, "If provided, all groups will be prefixed with this value to prevent conflicts with "+
		"other authentication strategies.")
	fs.StringSliceVar(&o.SigningAlgs, "oidc-signing-algs", o.SigningAlgs, "Comma-separated list of allowed JOSE asymmetric signing algorithms. JWTs with a "+
		"supported 'alg' header values are: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512.")
	fs.Var(cliflag.NewMapStringStringNoSplit(&o.OIDC.RequiredClaims), "oidc-required-claim", "A key=value pair that describes a required claim in the ID Token. "+
		"If set, the claim is verified to be present in the ID Token with a matching value. Repeat this flag to specify multiple claims.")
	for _, name := range []string{"oidc-issuer-url", "oidc-client-id", "oidc-ca-file", "oidc-username-claim", "oidc-username-prefix",
		"oidc-groups-claim", "oidc-groups-prefix", "oidc-signing-algs", "oidc-required-claim"} {
		track(fs, name, &o.oidcFlagsSet)
	}
	track(fs, "anonymous-auth", &o.anonymousFlagsSet)
}

func track(fs *pflag.FlagSet, name string, set *bool) {
	if f := fs.Lookup(name); f != nil {
		f.Value = cliflag.NewTracker(f.Value, set)
	}
}

// Validate reports the combinations kube refuses.
func (o *JWTOptions) Validate() error {
	switch {
	case o.ConfigFile == "" && o.oidcFlagsSet && (o.OIDC.IssuerURL == "" || o.OIDC.ClientID == ""):
		return errors.New("oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set")
	case o.ConfigFile != "" && o.oidcFlagsSet:
		return errors.New("authentication-config file and oidc-* flags are mutually exclusive")
	}
	return nil
}

// jwtConfig is the JWT authenticator's configuration, loaded and
// validated; cfg is nil when no flag asks for one.
type jwtConfig struct {
	cfg    *jwt.Config
	data   []byte // the file as read, to tell a change from a rewrite
	algs   []string
	file   string
	reload time.Duration
}

// load reads and validates the configuration (kube's start errors).
func (o *JWTOptions) load() (jwtConfig, error) {
	out := jwtConfig{algs: o.SigningAlgs, file: o.ConfigFile, reload: o.ReloadInterval}
	var err error
	switch {
	case o.ConfigFile != "":
		if out.cfg, out.data, err = jwt.LoadFile(o.ConfigFile); err != nil {
			return out, jwt.FailedToLoad(o.ConfigFile, err)
		}
		out.algs = jwt.SigningAlgorithms
	case o.OIDC.IssuerURL != "" && o.OIDC.ClientID != "":
		if out.cfg, err = jwt.FromLegacyFlags(o.OIDC); err != nil {
			return out, err
		}
	default:
		return out, nil
	}
	if out.cfg.Anonymous != nil && o.anonymousFlagsSet {
		return out, field.Forbidden(field.NewPath("anonymous"), "--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file")
	}
	// As kube, the service account issuers are not known yet here; the
	// authenticator checks them.
	if errs := jwt.Validate(out.cfg, nil); len(errs) > 0 {
		return out, fmt.Errorf("invalid authentication configuration: %w", errs.ToAggregate())
	}
	return out, nil
}

// anonymousConfig is the file's anonymous section, nil when it has none.
func (j jwtConfig) anonymousConfig() *apiserver.AnonymousAuthConfig {
	if j.cfg == nil {
		return nil
	}
	return j.cfg.Anonymous
}

// start builds the authenticator and starts the issuers' discovery and,
// for a file, its reload; all run until ctx ends. It returns nil when
// there is no configuration. serviceAccountIssuers may not be jwt issuers.
func (j jwtConfig) start(ctx context.Context, serviceAccountIssuers []string, logger *slog.Logger) (authn.TokenAuthenticator, error) {
	if j.cfg == nil {
		return nil, nil
	}
	tokens, err := jwt.New(ctx, j.cfg, jwt.Options{SigningAlgs: j.algs, DisallowedIssuers: serviceAccountIssuers, Logger: logger})
	if err != nil {
		return nil, err
	}
	if j.file != "" {
		go tokens.Watch(ctx, j.file, j.reload, j.data, j.cfg)
	}
	return tokens, nil
}

// anonymous is the anonymous authenticator, ok false when anonymous
// requests are off: --authentication-config's anonymous section when it
// has one (only its conditions' paths, when it names some), else
// --anonymous-auth.
func (c *Config) anonymous() (_ authn.Authenticator, ok bool) {
	a := c.jwt.anonymousConfig()
	if a == nil {
		return authn.NewAnonymous(), c.Options.Authentication.AnonymousAuth
	}
	if !a.Enabled {
		return nil, false
	}
	if len(a.Conditions) == 0 {
		return authn.NewAnonymous(), true
	}
	paths := map[string]bool{}
	for _, cond := range a.Conditions {
		paths[cond.Path] = true
	}
	anonymous := authn.NewAnonymous()
	return authn.AuthenticatorFunc(func(r *http.Request) (*authn.Response, bool, error) {
		if !paths[r.URL.Path] {
			return nil, false, nil
		}
		return anonymous.AuthenticateRequest(r)
	}), true
}
