package app

import (
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/apis/apiserver"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/endpoints/discovery"
	"github.com/capstan-io/capstan/openapi"
	"github.com/capstan-io/capstan/openapi/generated"
	"github.com/capstan-io/capstan/pki"
	"github.com/capstan-io/capstan/server"
	"github.com/capstan-io/capstan/storage/embedded"
	"github.com/capstan-io/capstan/storage/encryptionconfig"
	"github.com/capstan-io/capstan/storage/etcd3"
)

// Config is what Options resolve to: storage, certificates, a listener and
// the generic server config every server of the chain is built from.
type Config struct {
	Generic  server.CompletedConfig
	Storage  *controlplane.StorageFactory
	EventTTL time.Duration
	Logger   *slog.Logger
	// Services configures cluster IPs, node ports and the kubernetes Service.
	Services controlplane.ServicesConfig
	// Authorization is --authorization-mode's authorizer, which the kube
	// server feeds with RBAC objects.
	Authorization *controlplane.Authorization
	// Workloads is --allow-privileged and the workload feature gates.
	Workloads controlplane.WorkloadPolicy

	// Authentication holds the token authenticators (--token-auth-file,
	// service account tokens), which the kube server serves TokenReviews and
	// TokenRequests with.
	Authentication *controlplane.Authentication
	// JWTAnonymous is the anonymous section of --authentication-config;
	// nil when the file has none (--anonymous-auth then decides).
	JWTAnonymous *apiserver.AnonymousAuthConfig

	// DisabledControllers are the in-process loops --controllers turns off.
	DisabledControllers controlplane.DisabledControllers

	// URL is where clients reach the server; Kubeconfig the admin
	// kubeconfig written for it ("" when capstan did not generate certs).
	URL        string
	Kubeconfig string

	// Admission is the admission flags' plugins and configuration.
	Admission controlplane.AdmissionConfig
	// RootCA is the CA bundle pods verify the server with.
	RootCA []byte

	// auditing is the --audit-* flags' policy and backends.
	auditing audit.Config

	// catalog holds the built-in OpenAPI definitions; types, the managed
	// fields types made from them, built in the background from the start.
	catalog openapi.Catalog
	types   *openapi.LazyTypeConverter

	etcdClient *clientv3.Client
	compactor  *etcd3.Compactor
	encryption *encryptionconfig.Set
	closers    []func() error
}

// warmTypes starts building the managed fields types, the largest piece
// of start-up work (~0.1 s of CPU), so that it runs while etcd is reached
// and certificates are made, rather than delaying the first write.
func (c *Config) warmTypes() {
	c.catalog = openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions)
	c.types = openapi.TypeConverter(c.catalog)
	go func() {
		if err := c.types.Warm(); err != nil {
			c.Logger.Error("managed fields are unavailable", "err", err)
		}
	}()
}

// NewConfig resolves completed, validated options into a Config: it starts
// or connects to etcd, ensures certificates and binds the listener.
func NewConfig(ctx context.Context, o *Options, logger *slog.Logger) (_ *Config, err error) {
	c := &Config{EventTTL: o.Misc.EventTTL, Logger: logger, DisabledControllers: o.Controllers.disabled(),
		Workloads: controlplane.WorkloadPolicy{
			Pods:                core.PodPolicy{ForbidPrivileged: !o.Misc.AllowPrivileged},
			StatefulSetRecreate: o.Generic.Versions.FeatureGates.Enabled("StatefulSetRecreateStrategy"),
		}}
	c.warmTypes()
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	// First, so that a bad --authentication-config fails the start at once.
	jwtAuth, err := c.startJWT(ctx, o)
	if err != nil {
		return nil, err
	}
	if c.Admission, err = o.Admission.config(); err != nil {
		return nil, err
	}
	c.Admission.EndpointRouting = o.Misc.Aggregator.Routing
	// Only the embedded etcd needs the data dir made here (the PKI makes
	// its own directories): against --etcd-servers with the certificates
	// given, as envtest runs kube-apiserver, nothing is written to it.
	if len(o.Etcd.Servers) == 0 {
		if err := os.MkdirAll(o.Capstan.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	if err := c.startAudit(o); err != nil {
		return nil, err
	}
	if c.etcdClient, err = c.connectEtcd(ctx, o); err != nil {
		return nil, err
	}
	c.compactor, err = c.startCompactor(ctx, o.Etcd.CompactionInterval)
	if err != nil {
		return nil, err
	}
	certs, err := pki.EnsureServing(pki.ServingOptions{
		TLSCertFile: o.SecureServing.TLSCertFile, TLSPrivateKeyFile: o.SecureServing.TLSKeyFile, CertDir: o.SecureServing.CertDir,
		DataDir: o.Capstan.DataDir, AdvertiseAddress: o.Generic.AdvertiseAddress, Log: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificates: %w", err)
	}
	if c.RootCA, err = rootCA(certs); err != nil {
		return nil, err
	}
	clientCAs, err := clientCAPool(o, certs)
	if err != nil {
		return nil, err
	}
	proxy, trust, err := frontProxy(o, certs)
	if err != nil {
		return nil, err
	}
	listener, err := o.SecureServing.listen(ctx)
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, func() error { return ignoreClosed(listener.Close()) })
	port := listener.Addr().(*net.TCPAddr).Port
	if c.Services, err = o.Misc.Services.config(publicIP(o), port); err != nil {
		return nil, err
	}
	c.URL = "https://" + net.JoinHostPort(clientHost(o), strconv.Itoa(port))
	if certs.Generated {
		c.Kubeconfig = filepath.Join(o.Capstan.DataDir, "admin.kubeconfig")
		if err := certs.WriteAdminKubeconfig(c.Kubeconfig, c.URL); err != nil {
			return nil, fmt.Errorf("admin kubeconfig: %w", err)
		}
	}
	if c.encryption, err = c.loadEncryption(ctx, o); err != nil {
		return nil, err
	}
	c.Storage = &controlplane.StorageFactory{
		Client: c.etcdClient, Prefix: o.Etcd.Prefix, Scheme: scheme.Scheme, Codecs: scheme.Codecs, Logger: logger,
		WatchCache: o.Etcd.WatchCache, Compactions: c.compactor, CountPollPeriod: o.Etcd.CountMetricPollPeriod,
		Deletion: o.Etcd.deletion(),
	}
	if c.Storage.Overrides, err = c.dialOverrides(ctx, o); err != nil {
		return nil, err
	}
	if c.Storage.CacheOff, err = o.Etcd.cachesOff(); err != nil {
		return nil, err
	}
	if c.encryption != nil {
		c.Storage.Transformers = c.encryption
	}
	if c.Authorization, err = controlplane.NewAuthorization(o.Authorization.config(logger)); err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	au, sa := &o.Authentication, &o.Authentication.ServiceAccounts
	if c.Authentication, err = controlplane.NewAuthentication(controlplane.AuthenticationConfig{
		JWT:           jwtAuth.tokens(),
		TokenAuthFile: au.TokenAuthFile, ServiceAccountIssuers: sa.Issuers, APIAudiences: au.APIAudiences,
		ServiceAccountKeyFiles: sa.KeyFiles, ServiceAccountSigningKeyFile: sa.SigningKeyFile,
		CertDir: o.SecureServing.CertDir, ServiceAccountMaxExpiration: sa.MaxExpiration, ServiceAccountJWKSURI: sa.JWKSURI,
		ExternalAddress: net.JoinHostPort(clientHost(o), strconv.Itoa(port)), Logger: logger,
		BootstrapTokens: au.Authn.BootstrapToken, WebhookCacheTTL: au.Authn.WebhookCacheTTL,
		Webhook: authn.WebhookOptions{KubeconfigFile: au.Authn.WebhookConfigFile, Version: au.Authn.WebhookVersion},
		Trust:   trust,
	}); err != nil {
		return nil, err
	}
	c.Generic, err = c.genericConfig(o, certs, clientCAs, proxy, listener)
	return c, err
}

// startAudit loads the audit policy and starts its backends; Close
// delivers what they still hold.
func (c *Config) startAudit(o *Options) error {
	auditing, b, err := o.Audit.config(c.Logger)
	if err != nil || b == nil {
		return err
	}
	b.Run(context.Background())
	c.closers = append(c.closers, func() error { b.Shutdown(); return nil })
	c.auditing = auditing
	return nil
}

func (c *Config) genericConfig(o *Options, certs pki.ServingCerts, clientCAs *pki.ClientCABundle, proxy frontProxyConfig, l net.Listener) (server.CompletedConfig, error) {
	// kube's order: the front proxy, client certificates, bearer tokens;
	// anonymous only when none of them found credentials, valid or not.
	var auths []authn.Authenticator
	if proxy.authenticator != nil {
		auths = append(auths, proxy.authenticator)
	}
	auths = append(auths, authn.NewX509(func() x509.VerifyOptions {
		return x509.VerifyOptions{Roots: clientCAs.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	}))
	if c.Authentication.Tokens != nil {
		auths = append(auths, authn.NewBearerToken(c.Authentication.Tokens, c.Authentication.APIAudiences),
			authn.NewWebSocketProtocol(c.Authentication.Tokens, c.Authentication.APIAudiences))
	}
	var auth authn.Authenticator = authn.Union(auths...)
	if anonymous, ok := c.anonymous(o); ok {
		auth = authn.UnionFailOnError(auth, anonymous)
	}
	serving, err := servingConfig(o, certs, clientCAs, l)
	if err != nil {
		return server.CompletedConfig{}, err
	}
	apis, err := o.APIEnablement.enablement()
	if err != nil {
		return server.CompletedConfig{}, err
	}
	g := o.Generic
	cfg := server.Config{
		Serving: serving,
		Codecs: server.CodecConfig{
			Serializer: scheme.Codecs, ParameterCodec: scheme.ParameterCodec, Creater: scheme.Scheme, Typer: scheme.Scheme,
			Convertor: scheme.Scheme, TypeConverter: c.types,
		},
		Authentication:        auth,
		Authorization:         c.Authorization.Authorizer,
		FlowControl:           o.Features.flowControl(g, c.Storage, c.Logger),
		Audit:                 c.auditing,
		Loopback:              server.NewLoopback(),
		AuthenticationHeaders: proxy.headers,
		Discovery:             discovery.NewRegistry(),
		// The CRD server publishes its kinds in the dynamic part.
		OpenAPI: openapi.WithDynamic(c.catalog, openapi.NewDynamicCatalog()),
		Health: server.HealthConfig{
			Checks: slices.Concat(etcdCheck(c.etcdClient, o.Etcd),
				[]server.HealthCheck{{Name: "watch-cache", Check: func(*http.Request) error { return c.Storage.CachesReady() }}},
				encryptionHealthCheck(c.encryption)),
			LivezGracePeriod: g.LivezGracePeriod,
		},
		Limits: server.LimitsConfig{
			RequestTimeout: g.RequestTimeout, MinRequestTimeout: time.Duration(g.MinRequestTimeout) * time.Second,
			MaxRequestBodyBytes: o.Capstan.MaxRequestBodyBytes, MaxRequestsInFlight: g.MaxRequestsInFlight,
			MaxMutatingRequestsInFlight: g.MaxMutatingInFlight,
		},
		Shutdown: server.ShutdownConfig{Delay: g.ShutdownDelayDuration, SendRetryAfter: g.ShutdownSendRetryAfter,
			WatchTerminationGracePeriod: g.ShutdownWatchTerminationGracePeriod},
		Debug:   server.DebugConfig{SocketPath: o.Features.DebugSocketPath, Profiling: o.Features.Profiling, ContentionProfiling: o.Features.ContentionProfiling},
		APIs:    apis,
		Version: versionInfo(o.Global.Version),
		Logger:  c.Logger,
	}
	return cfg.Complete()
}

// servingConfig is how the server listens and what every response carries.
func servingConfig(o *Options, certs pki.ServingCerts, clientCAs *pki.ClientCABundle, l net.Listener) (server.ServingConfig, error) {
	s := o.SecureServing
	tlsFlags, err := s.TLS.config()
	if err != nil {
		return server.ServingConfig{}, err
	}
	sni, err := pki.NewCertSelector(certs.Certificate, tlsFlags.sni)
	if err != nil {
		return server.ServingConfig{}, err
	}
	cors, err := corsOrigins(o.Generic.CORSAllowedOrigins)
	if err != nil {
		return server.ServingConfig{}, err
	}
	external := l.Addr().String()
	if h := o.Generic.ExternalHostname; h != "" {
		_, port, _ := net.SplitHostPort(external)
		external = net.JoinHostPort(h, port)
	}
	return server.ServingConfig{
		Listener: l, GetCertificate: sni.GetCertificate, ClientCAs: clientCAs.Pool,
		MinTLSVersion: tlsFlags.minVersion, CipherSuites: tlsFlags.cipherSuites, CurvePreferences: tlsFlags.curves,
		ExternalAddress: external, HTTP2MaxStreamsPerConnection: s.HTTP2MaxStreams, DisableHTTP2: s.DisableHTTP2,
		GoawayChance: o.Generic.GoawayChance, CORSAllowedOrigins: cors, HSTSDirectives: o.Generic.HSTSDirectives,
	}, nil
}

func clientCAPool(o *Options, certs pki.ServingCerts) (*pki.ClientCABundle, error) {
	b, err := pki.NewClientCABundle(o.Authentication.ClientCAFile, certs.CAPEM)
	if err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	return b, nil
}

// clientHost is the host clients use: the advertise address, or loopback
// when the server listens everywhere.
func clientHost(o *Options) string {
	switch {
	case o.Generic.AdvertiseAddress != nil && !o.Generic.AdvertiseAddress.IsUnspecified():
		return o.Generic.AdvertiseAddress.String()
	case o.SecureServing.BindAddress != nil && !o.SecureServing.BindAddress.IsUnspecified():
		return o.SecureServing.BindAddress.String()
	}
	return "127.0.0.1"
}

// EtcdClient is the client of the etcd capstan stores in, for tests and
// tools that need to reach below the API (to force a compaction, say).
func (c *Config) EtcdClient() *clientv3.Client { return c.etcdClient }

// Compactor is the compactor of etcd's history, for tests and tools that
// force a compaction the watch caches must follow.
func (c *Config) Compactor() *etcd3.Compactor { return c.compactor }

// Close releases etcd and the listener.
func (c *Config) Close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		if err := c.closers[i](); err != nil {
			c.Logger.Warn("closing", "err", err)
		}
	}
	c.closers = nil
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// startCompactor compacts etcd history older than five minutes, as
// kube-apiserver does; several servers on one etcd take turns.
func (c *Config) startCompactor(ctx context.Context, interval time.Duration) (*etcd3.Compactor, error) {
	compactor, err := etcd3.NewCompactor(etcd3.CompactorConfig{Client: c.etcdClient, Interval: interval, Logger: c.Logger})
	if err != nil || interval == 0 {
		// --etcd-compaction-interval=0: another party compacts etcd.
		return compactor, err
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		compactor.Run(cctx)
	}()
	c.closers = append(c.closers, func() error { cancel(); <-done; return nil })
	return compactor, nil
}

// connectEtcd starts the embedded etcd, or connects to --etcd-servers.
func (c *Config) connectEtcd(ctx context.Context, o *Options) (*clientv3.Client, error) {
	if len(o.Etcd.Servers) == 0 {
		srv, err := embedded.Start(ctx, embedded.Config{
			Dir: filepath.Join(o.Capstan.DataDir, "etcd"), Logger: c.Logger, UnsafeNoFsync: o.Capstan.UnsafeNoFsync,
			WatchProgressNotifyInterval: 5 * time.Second,
		})
		if err != nil {
			return nil, err
		}
		c.closers = append(c.closers, srv.Close)
		return srv.Client(), nil
	}
	client, err := dialEtcd(ctx, o.Etcd.Servers, o.Etcd.TLS, o.Generic.StorageInitializationTimeout)
	if err != nil {
		return nil, fmt.Errorf("connecting to --etcd-servers: %w", err)
	}
	c.closers = append(c.closers, client.Close)
	return client, nil
}

// dialOverrides connects to the etcd servers of --etcd-servers-overrides,
// with the same client certificate as --etcd-servers.
func (c *Config) dialOverrides(ctx context.Context, o *Options) (map[schema.GroupResource]*clientv3.Client, error) {
	overrides, err := parseServersOverrides(o.Etcd.ServersOverrides)
	if err != nil || len(overrides) == 0 {
		return nil, err
	}
	out := map[schema.GroupResource]*clientv3.Client{}
	for _, ov := range overrides {
		client, err := dialEtcd(ctx, ov.Servers, o.Etcd.TLS, o.Generic.StorageInitializationTimeout)
		if err != nil {
			return nil, fmt.Errorf("connecting to the --etcd-servers-overrides of %s: %w", ov.Resource, err)
		}
		c.closers = append(c.closers, client.Close)
		out[ov.Resource] = client
	}
	return out, nil
}

// dialEtcd connects to servers, with a client certificate and CA when
// they are given (etcd over mutual TLS, as kubeadm runs it).
func dialEtcd(ctx context.Context, servers []string, t EtcdTLSOptions, timeout time.Duration) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: servers, DialTimeout: cmp.Or(timeout, 20*time.Second), Context: context.WithoutCancel(ctx)}
	if t != (EtcdTLSOptions{}) {
		tlsConfig, err := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.CAFile}.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd TLS (--etcd-cafile, --etcd-certfile, --etcd-keyfile): %w", err)
		}
		cfg.TLS = tlsConfig
	}
	return clientv3.New(cfg)
}
