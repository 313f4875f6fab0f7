package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/audit"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/openapi"
	"github.com/capstan-io/capstan/openapi/generated"
	"github.com/capstan-io/capstan/pki"
	"github.com/capstan-io/capstan/server"
	"github.com/capstan-io/capstan/storage/encryptionconfig"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagefactory"
	"github.com/capstan-io/capstan/tracing"
)

// Process is a started Config: etcd reached (or run), its compactor and
// the audit backends running, certificates on disk, the listener bound,
// and the generic server config every server of the chain is built from.
// Close stops what Start started.
type Process struct {
	*Config

	Generic server.CompletedConfig
	Storage *storagefactory.Factory
	// Services configures cluster IPs, node ports and the kubernetes Service.
	Services controlplane.ServicesConfig
	// Authentication holds the token authenticators (--token-auth-file,
	// service account tokens), which the kube server serves TokenReviews and
	// TokenRequests with.
	Authentication *controlplane.Authentication
	// RootCA is the CA bundle pods verify the server with.
	RootCA []byte
	// URL is where clients reach the server; Kubeconfig the admin
	// kubeconfig written for it ("" when capstan did not generate certs).
	URL        string
	Kubeconfig string

	auditing audit.Config
	// catalog holds the built-in OpenAPI definitions; types, the managed
	// fields types made from them, built in the background from the start.
	catalog openapi.Catalog
	types   *openapi.LazyTypeConverter

	etcdClient *clientv3.Client
	compactor  *etcd3.Compactor
	encryption *encryptionconfig.Set
	tracer     tracing.Provider // nil: requests are not traced
	closers    []func() error
}

// Start starts what c describes, in the order the pieces need each other.
func (c *Config) Start(ctx context.Context) (_ *Process, err error) {
	p := &Process{Config: c}
	p.warmTypes()
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	o := c.Options
	jwtTokens, err := c.jwt.start(p.closing(ctx), o.Authentication.ServiceAccounts.Issuers, c.Logger)
	if err != nil {
		return nil, err
	}
	// Only the embedded etcd needs the data dir made here (the PKI makes
	// its own directories): against --etcd-servers with the certificates
	// given, as envtest runs kube-apiserver, nothing is written to it.
	if len(o.Etcd.Servers) == 0 {
		if err := os.MkdirAll(o.Capstan.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	if err := p.startTracing(ctx); err != nil {
		return nil, err
	}
	if err := p.startAudit(); err != nil {
		return nil, err
	}
	if err := p.startStorage(ctx); err != nil {
		return nil, err
	}
	certs, err := pki.EnsureServing(pki.ServingOptions{
		TLSCertFile: o.SecureServing.TLSCertFile, TLSPrivateKeyFile: o.SecureServing.TLSKeyFile, CertDir: o.SecureServing.CertDir,
		DataDir: o.Capstan.DataDir, AdvertiseAddress: o.Generic.AdvertiseAddress, Log: c.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificates: %w", err)
	}
	if p.RootCA, err = rootCA(certs); err != nil {
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
	p.closers = append(p.closers, func() error { return ignoreClosed(listener.Close()) })
	if err := p.publish(certs, listener.Addr().(*net.TCPAddr).Port); err != nil {
		return nil, err
	}
	if err := p.startAuthentication(jwtTokens, trust); err != nil {
		return nil, err
	}
	p.Generic, err = p.genericConfig(certs, clientCAs, proxy, listener)
	return p, err
}

// warmTypes starts building the managed fields types, the largest piece
// of start-up work, so that it runs while etcd is reached and
// certificates are made, rather than delaying the first write.
func (p *Process) warmTypes() {
	p.catalog = openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions)
	p.types = openapi.TypeConverter(p.catalog)
	go func() {
		if err := p.types.Warm(); err != nil {
			p.Logger.Error("managed fields are unavailable", "err", err)
		}
	}()
}

// closing is a context that ends when the Process is closed, for the
// background work Start begins (issuer discovery, KMS connections).
func (p *Process) closing(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.closers = append(p.closers, func() error { cancel(); return nil })
	return ctx
}

// startAudit opens and starts the audit backends; Close delivers what they
// still hold.
func (p *Process) startAudit() error {
	if p.auditPolicy == nil {
		return nil
	}
	b, err := p.Options.Audit.backend(p.Logger)
	if err != nil || b == nil {
		return err
	}
	b.Run(context.Background())
	p.closers = append(p.closers, func() error { b.Shutdown(); return nil })
	p.auditing = audit.Config{Policy: p.auditPolicy, Sink: b}
	return nil
}

// publish fixes the addresses clients reach the server at, now that the
// port is known, and writes the admin kubeconfig for them.
func (p *Process) publish(certs pki.ServingCerts, port int) error {
	o := p.Options
	var err error
	if p.Services, err = o.Misc.Services.config(publicIP(o), port); err != nil {
		return err
	}
	p.Services.NoEndpointReconciler = o.Misc.EndpointReconcilerType == "none"
	p.URL = "https://" + net.JoinHostPort(clientHost(o), strconv.Itoa(port))
	if certs.Generated {
		p.Kubeconfig = filepath.Join(o.Capstan.DataDir, "admin.kubeconfig")
		if err := certs.WriteAdminKubeconfig(p.Kubeconfig, p.URL); err != nil {
			return fmt.Errorf("admin kubeconfig: %w", err)
		}
	}
	return nil
}

// startAuthentication builds the token authenticators, jwtTokens among
// them (nil for none).
func (p *Process) startAuthentication(jwtTokens authn.TokenAuthenticator, trust controlplane.ClusterAuthenticationTrust) error {
	o := p.Options
	au, sa := &o.Authentication, &o.Authentication.ServiceAccounts
	var err error
	p.Authentication, err = controlplane.NewAuthentication(controlplane.AuthenticationConfig{
		JWT:           jwtTokens,
		TokenAuthFile: au.TokenAuthFile, ServiceAccountIssuers: sa.Issuers, APIAudiences: au.APIAudiences,
		ServiceAccountKeyFiles: sa.KeyFiles, ServiceAccountSigningKeyFile: sa.SigningKeyFile,
		CertDir: o.SecureServing.CertDir, ServiceAccountMaxExpiration: sa.MaxExpiration, ServiceAccountJWKSURI: sa.JWKSURI,
		ServiceAccountExtendExpiration: sa.ExtendExpiration,
		ExternalAddress:                strings.TrimPrefix(p.URL, "https://"), Logger: p.Logger,
		BootstrapTokens: au.Authn.BootstrapToken, WebhookCacheTTL: au.Authn.WebhookCacheTTL,
		Webhook: authn.WebhookOptions{KubeconfigFile: au.Authn.WebhookConfigFile, Version: au.Authn.WebhookVersion},
		Trust:   trust,
	})
	return err
}

// EtcdClient is the client of the etcd capstan stores in, for tests and
// tools that need to reach below the API (to force a compaction, say).
func (p *Process) EtcdClient() *clientv3.Client { return p.etcdClient }

// Compactor is the compactor of etcd's history, for tests and tools that
// force a compaction the watch caches must follow.
func (p *Process) Compactor() *etcd3.Compactor { return p.compactor }

// Close stops what Start started, in reverse order.
func (p *Process) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		if err := p.closers[i](); err != nil {
			p.Logger.Warn("closing", "err", err)
		}
	}
	p.closers = nil
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
