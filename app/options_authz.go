package app

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/authz/authzconfig"
	"github.com/capstan-io/capstan/controlplane"
)

// AuthorizationOptions are the authorization flags beside
// --authorization-mode, with kube-apiserver's names and defaults.
type AuthorizationOptions struct {
	// Modes is --authorization-mode, in order.
	Modes                  []string
	PolicyFile             string
	WebhookConfigFile      string
	WebhookVersion         string
	WebhookAuthorizedTTL   time.Duration
	WebhookUnauthorizedTTL time.Duration
	ConfigFile             string

	// legacyFlagsSet reports whether --authorization-mode or a
	// --authorization-webhook-* flag was given, which --authorization-config
	// excludes.
	legacyFlagsSet func() bool
}

// NewAuthorizationOptions returns kube's defaults.
func NewAuthorizationOptions() AuthorizationOptions {
	return AuthorizationOptions{Modes: []string{authz.ModeNode, authz.ModeRBAC}, WebhookVersion: "v1beta1", WebhookAuthorizedTTL: 5 * time.Minute, WebhookUnauthorizedTTL: 30 * time.Second}
}

// AddFlags registers the flags.
func (o *AuthorizationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Modes, "authorization-mode", o.Modes, "Ordered list of plug-ins to do authorization on secure port. "+
		"Defaults to Node,RBAC (kube-apiserver: AlwaysAllow) if --authorization-config is not used. Comma-delimited list of: "+
		strings.Join(authz.ModeChoices, ",")+".")
	fs.StringVar(&o.PolicyFile, "authorization-policy-file", o.PolicyFile, "File with authorization policy in json line by line format, used with --authorization-mode=ABAC, on the secure port.")
	fs.StringVar(&o.WebhookConfigFile, "authorization-webhook-config-file", o.WebhookConfigFile, "File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook. "+
		"The API server will query the remote service to determine access on the API server's secure port.")
	fs.StringVar(&o.WebhookVersion, "authorization-webhook-version", o.WebhookVersion, "The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.")
	fs.DurationVar(&o.WebhookAuthorizedTTL, "authorization-webhook-cache-authorized-ttl", o.WebhookAuthorizedTTL, "The duration to cache 'authorized' responses from the webhook authorizer.")
	fs.DurationVar(&o.WebhookUnauthorizedTTL, "authorization-webhook-cache-unauthorized-ttl", o.WebhookUnauthorizedTTL, "The duration to cache 'unauthorized' responses from the webhook authorizer.")
	fs.StringVar(&o.ConfigFile, "authorization-config", o.ConfigFile, "File with Authorization Configuration to configure the authorizer chain. "+
		"This flag is mutually exclusive with the other --authorization-mode and --authorization-webhook-* flags.")
	o.legacyFlagsSet = func() bool {
		return slices.ContainsFunc([]string{"authorization-mode", "authorization-webhook-config-file", "authorization-webhook-version",
			"authorization-webhook-cache-authorized-ttl", "authorization-webhook-cache-unauthorized-ttl"}, fs.Changed)
	}
}

// Validate reports what kube reports about the flags.
func (o *AuthorizationOptions) Validate() error {
	modes := o.Modes
	if o.ConfigFile != "" {
		if o.legacyFlagsSet != nil && o.legacyFlagsSet() {
			return errors.New("--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined")
		}
		_, _, err := authzconfig.LoadFile(o.ConfigFile)
		return err
	}
	errs := []error{authz.ValidateModes(modes)}
	if slices.Contains(modes, authz.ModeABAC) && o.PolicyFile == "" {
		errs = append(errs, errors.New("authorization-mode ABAC's authorization policy file not passed"))
	}
	if slices.Contains(modes, authz.ModeWebhook) && o.WebhookConfigFile == "" {
		errs = append(errs, errors.New("authorization-mode Webhook's authorization config file not passed"))
	}
	if o.PolicyFile != "" && !slices.Contains(modes, authz.ModeABAC) {
		errs = append(errs, errors.New("cannot specify --authorization-policy-file without mode ABAC"))
	}
	if o.WebhookConfigFile != "" && !slices.Contains(modes, authz.ModeWebhook) {
		errs = append(errs, errors.New("cannot specify --authorization-webhook-config-file without mode Webhook"))
	}
	return errors.Join(errs...)
}

// config is the controlplane's view of the flags.
func (o *AuthorizationOptions) config(logger *slog.Logger) controlplane.AuthorizationConfig {
	return controlplane.AuthorizationConfig{
		Modes: o.Modes, PolicyFile: o.PolicyFile, ConfigFile: o.ConfigFile,
		WebhookConfigFile: o.WebhookConfigFile, WebhookVersion: o.WebhookVersion,
		WebhookAuthorizedTTL: o.WebhookAuthorizedTTL, WebhookUnauthorizedTTL: o.WebhookUnauthorizedTTL,
		Logger: logger,
	}
}
