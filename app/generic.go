package app

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/endpoints/discovery"
	"github.com/capstan-io/capstan/openapi"
	"github.com/capstan-io/capstan/pki"
	"github.com/capstan-io/capstan/server"
)

// genericConfig is the generic server config every server of the chain
// is built from.
func (p *Process) genericConfig(certs pki.ServingCerts, clientCAs *pki.ClientCABundle, proxy frontProxyConfig, l net.Listener) (server.CompletedConfig, error) {
	o := p.Options
	// kube's order: the front proxy, client certificates, bearer tokens;
	// anonymous only when none of them found credentials, valid or not.
	var auths []authn.Authenticator
	if proxy.authenticator != nil {
		auths = append(auths, proxy.authenticator)
	}
	auths = append(auths, authn.NewX509(func() x509.VerifyOptions {
		return x509.VerifyOptions{Roots: clientCAs.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	}))
	if p.Authentication.Tokens != nil {
		auths = append(auths, authn.NewBearerToken(p.Authentication.Tokens, p.Authentication.APIAudiences),
			authn.NewWebSocketProtocol(p.Authentication.Tokens, p.Authentication.APIAudiences))
	}
	var auth authn.Authenticator = authn.Union(auths...)
	if anonymous, ok := p.anonymous(); ok {
		auth = authn.UnionFailOnError(auth, anonymous)
	}
	serving, err := servingConfig(o, certs, clientCAs, l)
	if err != nil {
		return server.CompletedConfig{}, err
	}
	metricsOpts, err := serverMetrics(o)
	if err != nil {
		return server.CompletedConfig{}, err
	}
	g := o.Generic
	cfg := server.Config{
		Serving: serving,
		Codecs: server.CodecConfig{
			Serializer: scheme.Codecs, ParameterCodec: scheme.ParameterCodec, Creater: scheme.Scheme, Typer: scheme.Scheme,
			Convertor: scheme.Scheme, TypeConverter: p.types,
		},
		Authentication:        auth,
		Authorization:         p.Authorization.Authorizer,
		FlowControl:           o.Features.flowControl(g, p.Storage, p.Logger),
		Audit:                 p.auditing,
		Loopback:              server.NewLoopback(),
		AuthenticationHeaders: proxy.headers,
		Discovery:             discovery.NewRegistry(),
		// The CRD server publishes its kinds in the dynamic part.
		OpenAPI: openapi.WithDynamic(p.catalog, openapi.NewDynamicCatalog()),
		Health: server.HealthConfig{
			Checks: slices.Concat(etcdCheck(p.etcdClient, o.Etcd),
				[]server.HealthCheck{{Name: "watch-cache", Check: func(*http.Request) error { return p.Storage.CachesReady() }}},
				encryptionHealthCheck(p.encryption)),
			LivezGracePeriod: g.LivezGracePeriod,
		},
		Limits: server.LimitsConfig{
			RequestTimeout: g.RequestTimeout, MinRequestTimeout: time.Duration(g.MinRequestTimeout) * time.Second,
			MaxRequestBodyBytes: o.Capstan.MaxRequestBodyBytes, MaxRequestsInFlight: g.MaxRequestsInFlight,
			MaxMutatingRequestsInFlight: g.MaxMutatingInFlight,
		},
		Shutdown: server.ShutdownConfig{Delay: g.ShutdownDelayDuration, SendRetryAfter: g.ShutdownSendRetryAfter,
			WatchTerminationGracePeriod: g.ShutdownWatchTerminationGracePeriod},
		Debug: server.DebugConfig{SocketPath: o.Features.DebugSocketPath, Profiling: o.Features.Profiling,
			ContentionProfiling: o.Features.ContentionProfiling, RequestLog: o.Logs.requestLog(), Flags: flagz(o)},
		Metrics: metricsOpts,
		Tracer:  p.tracerProvider(),
		APIs:    p.APIs,
		Version: versionInfo(o.Global.Version),
		Logger:  p.Logger,
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
