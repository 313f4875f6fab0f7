package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/authn"
)

// AuthnOptions are the flags of the front proxy, bootstrap token and token
// webhook authenticators, with kube-apiserver's names and defaults.
type AuthnOptions struct {
	RequestHeader RequestHeaderOptions

	// BootstrapToken is --enable-bootstrap-token-auth.
	BootstrapToken bool

	// Webhook* are --authentication-token-webhook-config-file, -version
	// and -cache-ttl.
	WebhookConfigFile string
	WebhookVersion    string
	WebhookCacheTTL   time.Duration
}

// RequestHeaderOptions are the --requestheader-* flags.
type RequestHeaderOptions struct {
	ClientCAFile                                                   string
	AllowedNames                                                   []string
	UsernameHeaders, UIDHeaders, GroupHeaders, ExtraHeaderPrefixes []string
}

// NewAuthnOptions returns kube-apiserver's defaults.
func NewAuthnOptions() AuthnOptions {
	return AuthnOptions{WebhookVersion: authn.DefaultWebhookVersion, WebhookCacheTTL: 2 * time.Minute}
}

// AddFlags registers the flags.
func (o *AuthnOptions) AddFlags(fs *pflag.FlagSet) {
	rh := &o.RequestHeader
	fs.StringVar(&rh.ClientCAFile, "requestheader-client-ca-file", rh.ClientCAFile, ""+
		"Root certificate bundle to use to verify client certificates on incoming requests "+
		"before trusting usernames in headers specified by --requestheader-username-headers. "+
		"WARNING: generally do not depend on authorization being already done for incoming requests.")
	fs.StringSliceVar(&rh.AllowedNames, "requestheader-allowed-names", rh.AllowedNames, ""+
		"List of client certificate common names to allow to provide usernames in headers "+
		"specified by --requestheader-username-headers. If empty, any client certificate validated "+
		"by the authorities in --requestheader-client-ca-file is allowed.")
	fs.StringSliceVar(&rh.UsernameHeaders, "requestheader-username-headers", rh.UsernameHeaders, "List of request headers to inspect for usernames. X-Remote-User is common.")
	fs.StringSliceVar(&rh.UIDHeaders, "requestheader-uid-headers", rh.UIDHeaders, "List of request headers to inspect for UIDs. X-Remote-Uid is suggested.")
	fs.StringSliceVar(&rh.GroupHeaders, "requestheader-group-headers", rh.GroupHeaders, "List of request headers to inspect for groups. X-Remote-Group is suggested.")
	fs.StringSliceVar(&rh.ExtraHeaderPrefixes, "requestheader-extra-headers-prefix", rh.ExtraHeaderPrefixes, "List of request header prefixes to inspect. X-Remote-Extra- is suggested.")
	fs.BoolVar(&o.BootstrapToken, "enable-bootstrap-token-auth", o.BootstrapToken, ""+
		"Enable to allow secrets of type 'bootstrap.kubernetes.io/token' in the 'kube-system' "+
		"namespace to be used for TLS bootstrapping authentication.")
	fs.StringVar(&o.WebhookConfigFile, "authentication-token-webhook-config-file", o.WebhookConfigFile, ""+
		"File with webhook configuration for token authentication in kubeconfig format. "+
		"The API server will query the remote service to determine authentication for bearer tokens.")
	fs.StringVar(&o.WebhookVersion, "authentication-token-webhook-version", o.WebhookVersion, "The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.")
	fs.DurationVar(&o.WebhookCacheTTL, "authentication-token-webhook-cache-ttl", o.WebhookCacheTTL, "The duration to cache responses from the webhook token authenticator.")
}

// Validate reports what is wrong with the flags, with kube's messages.
func (o *AuthnOptions) Validate() error {
	var errs []error
	rh := o.RequestHeader
	for _, f := range []struct {
		flag  string
		names []string
	}{
		{"requestheader-username-headers", rh.UsernameHeaders}, {"requestheader-group-headers", rh.GroupHeaders},
		{"requestheader-extra-headers-prefix", rh.ExtraHeaderPrefixes}, {"requestheader-allowed-names", rh.AllowedNames},
		{"requestheader-uid-headers", rh.UIDHeaders},
	} {
		if slices.ContainsFunc(f.names, func(n string) bool { return strings.TrimSpace(n) == "" }) {
			errs = append(errs, fmt.Errorf("empty value in %q", f.flag))
		}
	}
	if len(rh.UIDHeaders) > 0 && !containsFold(rh.UIDHeaders, "X-Remote-Uid") {
		errs = append(errs, errors.New("--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - API aggregation will not work"))
	}
	if o.WebhookConfigFile != "" {
		if err := authn.ValidateWebhookVersion(o.WebhookVersion); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// requestHeaders are the headers the front proxy authenticator reads.
func (o RequestHeaderOptions) requestHeaders() (authn.RequestHeaders, error) {
	var h authn.RequestHeaders
	var err error
	for _, f := range []struct {
		out *[]string
		in  []string
	}{{&h.Username, o.UsernameHeaders}, {&h.UID, o.UIDHeaders}, {&h.Group, o.GroupHeaders}, {&h.ExtraPrefix, o.ExtraHeaderPrefixes}} {
		if *f.out, err = authn.TrimHeaderNames(f.in); err != nil {
			return h, err
		}
	}
	return h, nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
