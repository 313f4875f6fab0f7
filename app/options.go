// Package app is capstan's command: flags become Options, Options become a
// Config, the Config builds the server chain, and the chain runs.
package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/controlplane"
)

// Options are the command-line flags, with kube-apiserver's names where the
// meaning is the same.
type Options struct {
	SecurePort       int
	BindAddress      net.IP
	AdvertiseAddress net.IP
	CertDir          string
	TLSCertFile      string
	TLSKeyFile       string
	ClientCAFile     string
	AnonymousAuth    bool

	// TLS are --tls-min-version, --tls-cipher-suites, --tls-curve-preferences and --tls-sni-cert-key.
	TLS TLSOptions

	// TokenAuthFile is --token-auth-file: static bearer tokens.
	TokenAuthFile string
	// ServiceAccounts are the --service-account-* flags and --api-audiences.
	ServiceAccountIssuers        []string
	ServiceAccountKeyFiles       []string
	ServiceAccountSigningKeyFile string
	ServiceAccountMaxExpiration  time.Duration
	ServiceAccountJWKSURI        string
	APIAudiences                 []string

	// Authn are the front proxy, bootstrap token and token webhook flags.
	Authn AuthnOptions
	// JWT are --authentication-config and the --oidc-* flags.
	JWT JWTOptions

	// AuthorizationModes is --authorization-mode, in order.
	AuthorizationModes []string
	// Authorization are the other --authorization-* flags.
	Authorization AuthorizationOptions

	// Services are --service-cluster-ip-range and --service-node-port-range.
	Services ServiceOptions
	// Encryption are the --encryption-provider-config flags.
	Encryption EncryptionOptions
	// FlowControl is --enable-priority-and-fairness.
	FlowControl FlowControlOptions
	// Audit are the --audit-* flags.
	Audit AuditOptions

	EtcdServers []string
	WatchCache  bool
	EtcdPrefix  string
	DataDir     string

	RequestTimeout        time.Duration
	MinRequestTimeout     int
	MaxRequestBodyBytes   int64
	MaxRequestsInFlight   int
	HTTP2MaxStreams       int
	MaxMutatingInFlight   int
	ShutdownDelayDuration time.Duration
	EventTTL              time.Duration
	DebugSocketPath       string
	Verbosity             int

	// AllowPrivileged is --allow-privileged: without it privileged
	// containers are refused, as kube refuses them by default.
	AllowPrivileged bool

	// UnsafeNoFsync makes the embedded etcd skip fsync: for tests only.
	UnsafeNoFsync bool
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		SecurePort: 6443, BindAddress: net.IPv4zero, AnonymousAuth: true, AuthorizationModes: []string{authz.ModeNode, authz.ModeRBAC},
		EtcdPrefix: "/registry", DataDir: "capstan-data", WatchCache: true,
		RequestTimeout: time.Minute, MinRequestTimeout: 1800, MaxRequestBodyBytes: 3 * 1024 * 1024,
		MaxRequestsInFlight: 400, MaxMutatingInFlight: 200,
		EventTTL: time.Hour, Services: NewServiceOptions(), Authorization: NewAuthorizationOptions(), Encryption: NewEncryptionOptions(),
		FlowControl: NewFlowControlOptions(), Audit: NewAuditOptions(),
		ServiceAccountIssuers: []string{controlplane.DefaultServiceAccountIssuer},
		Authn:                 NewAuthnOptions(), JWT: NewJWTOptions(),
	}
}

// AddFlags registers the options' flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "The port on which to serve HTTPS with authentication and authorization. 0 picks a free port.")
	fs.IPVar(&o.BindAddress, "bind-address", o.BindAddress, "The IP address on which to listen for the --secure-port port.")
	fs.IntVar(&o.HTTP2MaxStreams, "http2-max-streams-per-connection", o.HTTP2MaxStreams, "The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means 100, as kube-apiserver.")
	fs.IPVar(&o.AdvertiseAddress, "advertise-address", o.AdvertiseAddress, "The IP address on which to advertise the apiserver to clients; added to the generated serving certificate.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "The directory where the TLS certs are located (apiserver.crt, apiserver.key). Defaults to <data-dir>/pki. Ignored if --tls-cert-file and --tls-private-key-file are given.")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", o.TLSCertFile, "File containing the default x509 serving certificate for HTTPS.")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", o.TLSKeyFile, "File containing the default x509 private key matching --tls-cert-file.")
	o.TLS.AddFlags(fs)
	fs.StringVar(&o.ClientCAFile, "client-ca-file", o.ClientCAFile, "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "If set, the file that will be used to secure the secure port of the API server via token authentication.")
	fs.StringArrayVar(&o.ServiceAccountIssuers, "service-account-issuer", o.ServiceAccountIssuers, "Identifier of the service account token issuer: the iss claim of issued tokens, and the URL of the discovery document at {service-account-issuer}/.well-known/openid-configuration. "+
		"May be given more than once: the first issues tokens, all are accepted.")
	fs.StringArrayVar(&o.ServiceAccountKeyFiles, "service-account-key-file", o.ServiceAccountKeyFiles, "File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify service account tokens. May be given more than once. "+
		"Defaults to the public key of --service-account-signing-key-file.")
	fs.StringVar(&o.ServiceAccountSigningKeyFile, "service-account-signing-key-file", o.ServiceAccountSigningKeyFile, "Path to the file that contains the current private key of the service account token issuer. "+
		"Without it capstan generates one in --cert-dir ("+controlplane.ServiceAccountKeyName+").")
	fs.DurationVar(&o.ServiceAccountMaxExpiration, "service-account-max-token-expiration", o.ServiceAccountMaxExpiration, "The maximum validity duration of a token created by the service account token issuer. Longer TokenRequests are shortened to it (0: no maximum).")
	fs.StringVar(&o.ServiceAccountJWKSURI, "service-account-jwks-uri", o.ServiceAccountJWKSURI, "Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration.")
	fs.StringSliceVar(&o.APIAudiences, "api-audiences", o.APIAudiences, "Identifiers of the API. Tokens used against the API must be bound to at least one of these audiences. Defaults to --service-account-issuer.")
	fs.BoolVar(&o.AnonymousAuth, "anonymous-auth", o.AnonymousAuth, "Enables anonymous requests to the secure port of the API server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.")
	o.Authn.AddFlags(fs)
	fs.StringSliceVar(&o.AuthorizationModes, "authorization-mode", o.AuthorizationModes, "Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: "+
		strings.Join(authz.ModeChoices, ",")+". Members of system:masters are always allowed.")
	o.JWT.AddFlags(fs)
	o.Authorization.AddFlags(fs)
	o.Services.AddFlags(fs)
	o.Encryption.AddFlags(fs)
	o.FlowControl.AddFlags(fs)
	o.Audit.AddFlags(fs)
	fs.StringSliceVar(&o.EtcdServers, "etcd-servers", o.EtcdServers, "List of etcd servers to connect with (scheme://ip:port), comma separated. Without it capstan runs an embedded etcd in --data-dir.")
	fs.BoolVar(&o.WatchCache, "watch-cache", o.WatchCache, "Serve lists and watches from a cache in front of etcd.")
	fs.StringVar(&o.EtcdPrefix, "etcd-prefix", o.EtcdPrefix, "The prefix to prepend to all resource paths in etcd.")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "Directory for the embedded etcd data, the generated PKI and admin.kubeconfig.")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", o.RequestTimeout, "The duration a handler must keep a request open before timing it out.")
	fs.IntVar(&o.MinRequestTimeout, "min-request-timeout", o.MinRequestTimeout, "The minimum number of seconds a handler must keep a watch open; each watch lasts a random time between this and twice this.")
	fs.Int64Var(&o.MaxRequestBodyBytes, "max-resource-write-bytes", o.MaxRequestBodyBytes, "The largest request body accepted on writes.")
	fs.IntVar(&o.MaxRequestsInFlight, "max-requests-inflight", o.MaxRequestsInFlight, "This and --max-mutating-requests-inflight are summed to determine the server's total concurrency limit (which must be positive) if --enable-priority-and-fairness is true. "+
		"Otherwise, the maximum number of non-mutating requests in flight at a given time (0: no limit). Requests over it get 429.")
	fs.IntVar(&o.MaxMutatingInFlight, "max-mutating-requests-inflight", o.MaxMutatingInFlight, "This and --max-requests-inflight are summed to determine the server's total concurrency limit (which must be positive) if --enable-priority-and-fairness is true. "+
		"Otherwise, the maximum number of mutating requests in flight at a given time (0: no limit). Requests over it get 429.")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration, "Time to delay the termination: /readyz fails while requests are still served.")
	fs.DurationVar(&o.EventTTL, "event-ttl", o.EventTTL, "Amount of time to retain events.")
	fs.StringVar(&o.DebugSocketPath, "debug-socket-path", o.DebugSocketPath, "Serve profiling (pprof) on this unix socket.")
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "Log level: 0 info, 1+ debug.")
	fs.BoolVar(&o.AllowPrivileged, "allow-privileged", o.AllowPrivileged, "If true, allow privileged containers. [default=false]")
	fs.BoolVar(&o.UnsafeNoFsync, "unsafe-no-fsync", o.UnsafeNoFsync, "Do not fsync the embedded etcd's writes (tests only: data may be lost on a crash).")
}

// Complete fills options derived from others.
func (o *Options) Complete() {
	if o.CertDir == "" {
		o.CertDir = filepath.Join(o.DataDir, "pki")
	}
}

// Validate reports every invalid option.
func (o *Options) Validate() error {
	var errs []error
	if o.SecurePort < 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port %d must be between 0 and 65535", o.SecurePort))
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file must be given together"))
	}
	if o.RequestTimeout < 0 || o.MinRequestTimeout < 0 {
		errs = append(errs, errors.New("--request-timeout and --min-request-timeout must not be negative"))
	}
	if o.EtcdPrefix == "" || o.EtcdPrefix[0] != '/' {
		errs = append(errs, fmt.Errorf("--etcd-prefix %q must start with /", o.EtcdPrefix))
	}
	if o.DataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	if err := o.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.JWT.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Services.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.FlowControl.Validate(o.MaxRequestsInFlight, o.MaxMutatingInFlight); err != nil {
		errs = append(errs, err)
	}
	if err := o.Encryption.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Audit.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := controlplane.ValidateServiceAccountMaxExpiration(o.ServiceAccountMaxExpiration); err != nil {
		errs = append(errs, err)
	}
	for i, iss := range o.ServiceAccountIssuers {
		if iss == "" {
			errs = append(errs, errors.New("service-account-issuer should not be an empty string"))
		} else if slices.Contains(o.ServiceAccountIssuers[:i], iss) {
			errs = append(errs, fmt.Errorf("service-account-issuer %q is already specified", iss))
		} else if strings.Contains(iss, ":") {
			if _, err := url.Parse(iss); err != nil {
				errs = append(errs, fmt.Errorf("service-account-issuer %q contained a ':' but was not a valid URL: %v", iss, err))
			}
		}
	}
	if err := o.Authn.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Authorization.Validate(o.AuthorizationModes); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
