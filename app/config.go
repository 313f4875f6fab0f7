package app

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
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
	// PodPolicy is --allow-privileged.
	PodPolicy core.PodPolicy

	// Authentication holds the token authenticators (--token-auth-file,
	// service account tokens), which the kube server serves TokenReviews and
	// TokenRequests with.
	Authentication *controlplane.Authentication
	// JWTAnonymous is the anonymous section of --authentication-config;
	// nil when the file has none (--anonymous-auth then decides).
	JWTAnonymous *apiserver.AnonymousAuthConfig

	// URL is where clients reach the server; Kubeconfig the admin
	// kubeconfig written for it ("" when capstan did not generate certs).
	URL        string
	Kubeconfig string

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
	c := &Config{EventTTL: o.EventTTL, Logger: logger, PodPolicy: core.PodPolicy{ForbidPrivileged: !o.AllowPrivileged}}
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
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if err := c.startAudit(o); err != nil {
		return nil, err
	}
	if c.etcdClient, err = c.connectEtcd(ctx, o); err != nil {
		return nil, err
	}
	c.compactor, err = c.startCompactor(ctx)
	if err != nil {
		return nil, err
	}
	certs, err := pki.EnsureServing(pki.ServingOptions{
		TLSCertFile: o.TLSCertFile, TLSPrivateKeyFile: o.TLSKeyFile, CertDir: o.CertDir, DataDir: o.DataDir,
		AdvertiseAddress: o.AdvertiseAddress, Log: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificates: %w", err)
	}
	clientCAs, err := clientCAPool(o, certs)
	if err != nil {
		return nil, err
	}
	proxy, trust, err := frontProxy(o, certs)
	if err != nil {
		return nil, err
	}
	listener, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress.String(), strconv.Itoa(o.SecurePort)))
	if err != nil {
		return nil, fmt.Errorf("listening on --secure-port: %w", err)
	}
	c.closers = append(c.closers, func() error { return ignoreClosed(listener.Close()) })
	port := listener.Addr().(*net.TCPAddr).Port
	if c.Services, err = o.Services.config(publicIP(o), port); err != nil {
		return nil, err
	}
	c.URL = "https://" + net.JoinHostPort(clientHost(o), strconv.Itoa(port))
	if certs.Generated {
		c.Kubeconfig = filepath.Join(o.DataDir, "admin.kubeconfig")
		if err := certs.WriteAdminKubeconfig(c.Kubeconfig, c.URL); err != nil {
			return nil, fmt.Errorf("admin kubeconfig: %w", err)
		}
	}
	if c.encryption, err = c.loadEncryption(ctx, o); err != nil {
		return nil, err
	}
	c.Storage = &controlplane.StorageFactory{
		Client: c.etcdClient, Prefix: o.EtcdPrefix, Scheme: scheme.Scheme, Codecs: scheme.Codecs, Logger: logger,
		WatchCache: o.WatchCache, Compactions: c.compactor, CountPollPeriod: o.FlowControl.CountPollPeriod,
	}
	if c.encryption != nil {
		c.Storage.Transformers = c.encryption
	}
	if c.Authorization, err = controlplane.NewAuthorization(o.Authorization.config(o.AuthorizationModes, logger)); err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	if c.Authentication, err = controlplane.NewAuthentication(controlplane.AuthenticationConfig{
		JWT:           jwtAuth.tokens(),
		TokenAuthFile: o.TokenAuthFile, ServiceAccountIssuers: o.ServiceAccountIssuers, APIAudiences: o.APIAudiences,
		ServiceAccountKeyFiles: o.ServiceAccountKeyFiles, ServiceAccountSigningKeyFile: o.ServiceAccountSigningKeyFile,
		CertDir: o.CertDir, ServiceAccountMaxExpiration: o.ServiceAccountMaxExpiration, ServiceAccountJWKSURI: o.ServiceAccountJWKSURI,
		ExternalAddress: net.JoinHostPort(clientHost(o), strconv.Itoa(port)), Logger: logger,
		BootstrapTokens: o.Authn.BootstrapToken, WebhookCacheTTL: o.Authn.WebhookCacheTTL,
		Webhook: authn.WebhookOptions{KubeconfigFile: o.Authn.WebhookConfigFile, Version: o.Authn.WebhookVersion},
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
		auths = append(auths, authn.NewBearerToken(c.Authentication.Tokens, c.Authentication.APIAudiences))
	}
	var auth authn.Authenticator = authn.Union(auths...)
	if anonymous, ok := c.anonymous(o); ok {
		auth = authn.UnionFailOnError(auth, anonymous)
	}
	tlsFlags, err := o.TLS.config()
	if err != nil {
		return server.CompletedConfig{}, err
	}
	sni, err := pki.NewCertSelector(certs.Certificate, tlsFlags.sni)
	if err != nil {
		return server.CompletedConfig{}, err
	}
	catalog, types := c.catalog, c.types
	cfg := server.Config{
		Serving: server.ServingConfig{
			Listener: l, GetCertificate: sni.GetCertificate, ClientCAs: clientCAs.Pool,
			MinTLSVersion: tlsFlags.minVersion, CipherSuites: tlsFlags.cipherSuites, CurvePreferences: tlsFlags.curves,
			ExternalAddress: l.Addr().String(), HTTP2MaxStreamsPerConnection: o.HTTP2MaxStreams,
		},
		Codecs: server.CodecConfig{
			Serializer: scheme.Codecs, ParameterCodec: scheme.ParameterCodec, Creater: scheme.Scheme, Typer: scheme.Scheme,
			Convertor: scheme.Scheme, TypeConverter: types,
		},
		Authentication:        auth,
		Authorization:         c.Authorization.Authorizer,
		FlowControl:           o.FlowControl.controller(o, c.Storage, c.Logger),
		Audit:                 c.auditing,
		Loopback:              server.NewLoopback(),
		AuthenticationHeaders: proxy.headers,
		Discovery:             discovery.NewRegistry(),
		// The CRD server publishes its kinds in the dynamic part.
		OpenAPI: openapi.WithDynamic(catalog, openapi.NewDynamicCatalog()),
		HealthChecks: append([]server.HealthCheck{etcdCheck(c.etcdClient),
			{Name: "watch-cache", Check: func(*http.Request) error { return c.Storage.CachesReady() }}},
			encryptionHealthCheck(c.encryption)...),
		Limits: server.LimitsConfig{
			RequestTimeout: o.RequestTimeout, MinRequestTimeout: time.Duration(o.MinRequestTimeout) * time.Second,
			MaxRequestBodyBytes: o.MaxRequestBodyBytes, MaxRequestsInFlight: o.MaxRequestsInFlight,
			MaxMutatingRequestsInFlight: o.MaxMutatingInFlight,
		},
		ShutdownDelayDuration: o.ShutdownDelayDuration,
		DebugSocketPath:       o.DebugSocketPath,
		Version:               versionInfo(),
		Logger:                c.Logger,
	}
	return cfg.Complete()
}

func clientCAPool(o *Options, certs pki.ServingCerts) (*pki.ClientCABundle, error) {
	b, err := pki.NewClientCABundle(o.ClientCAFile, certs.CAPEM)
	if err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	return b, nil
}

// clientHost is the host clients use: the advertise address, or loopback
// when the server listens everywhere.
func clientHost(o *Options) string {
	switch {
	case o.AdvertiseAddress != nil && !o.AdvertiseAddress.IsUnspecified():
		return o.AdvertiseAddress.String()
	case o.BindAddress != nil && !o.BindAddress.IsUnspecified():
		return o.BindAddress.String()
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
func (c *Config) startCompactor(ctx context.Context) (*etcd3.Compactor, error) {
	compactor, err := etcd3.NewCompactor(etcd3.CompactorConfig{Client: c.etcdClient, Logger: c.Logger})
	if err != nil {
		return nil, err
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
	if len(o.EtcdServers) == 0 {
		srv, err := embedded.Start(ctx, embedded.Config{
			Dir: filepath.Join(o.DataDir, "etcd"), Logger: c.Logger, UnsafeNoFsync: o.UnsafeNoFsync,
			WatchProgressNotifyInterval: 5 * time.Second,
		})
		if err != nil {
			return nil, err
		}
		c.closers = append(c.closers, srv.Close)
		return srv.Client(), nil
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: o.EtcdServers, DialTimeout: 20 * time.Second, Context: context.WithoutCancel(ctx)})
	if err != nil {
		return nil, fmt.Errorf("connecting to --etcd-servers: %w", err)
	}
	c.closers = append(c.closers, client.Close)
	return client, nil
}
