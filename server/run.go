package server

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/openapi"
)

// PreparedServer is a server whose non-API paths are installed; only it
// can Run.
type PreparedServer struct {
	*Server
	shuttingDown atomic.Bool
	// started is when PrepareRun ran, the start of the livez grace period.
	started time.Time
}

// PrepareRun installs the health, version, root discovery and OpenAPI paths
// on the outermost server.
func (s *Server) PrepareRun() *PreparedServer {
	p := &PreparedServer{Server: s, started: time.Now()}
	s.installDebug()
	p.installZPages()
	for _, kind := range []string{"healthz", "livez", "readyz"} {
		h := serveChecks(kind, func() []HealthCheck { return p.checks(kind) })
		s.Handle("/"+kind, h)
		s.Handle("/"+kind+"/", h)
	}
	s.Handle("/version", http.HandlerFunc(p.serveVersion))
	s.Handle("/metrics", metrics.Handler(s.config.Metrics))
	s.Handle("/metrics/slis", metrics.SLIHandler())
	addr := s.config.Serving.ExternalAddress
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.config.Discovery.ServeRoot(w, r, true, addr)
	})
	s.Handle("/api", api)
	s.Handle("/api/{$}", api) // as /apis/, kube answers /api/ too
	apis := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.config.Discovery.ServeRoot(w, r, false, addr)
	})
	// kube's aggregator serves the group list at /apis/ too.
	s.Handle("/apis", apis)
	s.Handle("/apis/{$}", apis)
	if s.config.OpenAPI != nil {
		openapi.NewService(openapi.Config{
			Registry: s.config.Discovery, Catalog: s.config.OpenAPI, Serializer: s.config.Codecs.Serializer,
			Version: s.config.Version.GitVersion, Logger: s.config.Logger,
		}).Install(s)
	}
	return p
}

// checks are the checks of /healthz, /livez or /readyz: ping, the
// configured backends, every post-start hook of the chain, and for readyz
// the shutdown state.
func (p *PreparedServer) checks(kind string) []HealthCheck {
	checks := []HealthCheck{PingCheck}
	for _, c := range p.config.Health.Checks {
		if (kind != "livez" || !c.NotLivez) && (kind == "readyz" || !c.ReadyzOnly) {
			checks = append(checks, c)
		}
	}
	for _, srv := range p.chain() {
		srv.mu.Lock()
		for _, h := range srv.postStart {
			check := h.check.check
			if kind == "livez" {
				check = p.withinLivezGrace(check)
			}
			checks = append(checks, HealthCheck{Name: "poststarthook/" + h.name, Check: check})
		}
		srv.mu.Unlock()
	}
	if kind == "readyz" {
		checks = append(checks, HealthCheck{Name: "shutdown", Check: func(*http.Request) error {
			if p.shuttingDown.Load() {
				return errors.New("process is shutting down")
			}
			return nil
		}})
	}
	return checks
}

func (p *PreparedServer) serveVersion(w http.ResponseWriter, _ *http.Request) {
	body, _ := json.MarshalIndent(p.config.Version, "", "  ")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// Run serves until ctx is done, then shuts down gracefully: /readyz fails
// at once, requests are still served for Shutdown.Delay, pre-shutdown
// hooks run, in-flight requests drain and watches end.
func (p *PreparedServer) Run(ctx context.Context) error {
	c := p.config
	p.config.Loopback.SetHandler(p.Handler)
	defer p.endWatches()
	srv := &http.Server{
		Handler:           p.Handler,
		ReadHeaderTimeout: 32 * time.Second,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    1 << 20,
		TLSConfig:         p.tlsConfig(),
		ErrorLog:          nil,
	}
	if !c.Serving.DisableHTTP2 {
		if err := configureHTTP2(srv, c.Serving.HTTP2MaxStreamsPerConnection); err != nil {
			return err
		}
	}
	// The debug socket is up before the first request is served, so that
	// whoever sees /readyz can profile.
	if c.Debug.SocketPath != "" {
		stop, err := serveDebugSocket(c.Debug.SocketPath)
		if err != nil {
			return err
		}
		defer stop()
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ServeTLS(c.Serving.Listener, "", "") }()
	// What post-start hooks start (controllers, watch caches) runs until
	// the server stops serving, not only until shutdown begins: requests
	// are still served during the shutdown delay.
	hookCtx, stopHooks := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHooks()
	p.runPostStartHooks(hookCtx)
	select {
	case err := <-serveErr:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	return p.shutdown(srv, stopHooks)
}

// shutdown fails /readyz, serves on for the delay, runs the pre-shutdown
// hooks, then stops what the post-start hooks started and drains requests.
func (p *PreparedServer) shutdown(srv *http.Server, stopHooks context.CancelFunc) error {
	c := p.config
	p.shuttingDown.Store(true)
	c.Logger.Info("shutting down", "delay", c.Shutdown.Delay)
	time.Sleep(c.Shutdown.Delay)
	p.runPreShutdownHooks()
	stopHooks()
	if err := p.drainThenShutdown(srv); err != nil {
		return fmt.Errorf("draining requests: %w", err)
	}
	return nil
}

func (p *PreparedServer) tlsConfig() *tls.Config {
	s := p.config.Serving
	c := &tls.Config{
		MinVersion:       cmp.Or(s.MinTLSVersion, tls.VersionTLS12),
		CipherSuites:     s.CipherSuites,
		CurvePreferences: s.CurvePreferences,
		NextProtos:       nextProtos(s.DisableHTTP2),
		GetCertificate:   s.GetCertificate,
		// Client certificates are asked for and verified by the x509
		// authenticator, so that other credentials work without one.
		ClientAuth: tls.RequestClientCert,
	}
	if s.ClientCAs != nil {
		// The pool only names acceptable CAs in the handshake; it may
		// change when --client-ca-file does.
		c.ClientCAs = s.ClientCAs()
		c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			pool := s.ClientCAs()
			if pool == c.ClientCAs {
				return nil, nil
			}
			withPool := c.Clone()
			withPool.ClientCAs, withPool.GetConfigForClient = pool, nil
			return withPool, nil
		}
	}
	return c
}

func (p *PreparedServer) runPostStartHooks(ctx context.Context) {
	hooksDone := make(chan struct{})
	hc := HookContext{Context: ctx, LoopbackClientConfig: p.LoopbackClientConfig(), HooksDone: hooksDone}
	releaseAfterStart(hooksDone)
	var running sync.WaitGroup
	defer func() {
		go func() {
			running.Wait()
			close(hooksDone)
		}()
	}()
	for _, srv := range p.chain() {
		srv.mu.Lock()
		hooks := append([]namedHook(nil), srv.postStart...)
		srv.mu.Unlock()
		for _, h := range hooks {
			running.Go(func() {
				err := h.fn(hc)
				if err != nil {
					p.config.Logger.Error("post-start hook failed", "hook", h.name, "err", err)
				}
				h.check.finish(err)
			})
		}
	}
}

func (p *PreparedServer) runPreShutdownHooks() {
	hc := HookContext{Context: context.Background(), LoopbackClientConfig: p.LoopbackClientConfig()}
	for _, srv := range p.chain() {
		srv.mu.Lock()
		hooks := append([]namedHook(nil), srv.preShutdown...)
		srv.mu.Unlock()
		for _, h := range hooks {
			if err := h.fn(hc); err != nil {
				p.config.Logger.Error("pre-shutdown hook failed", "hook", h.name, "err", err)
			}
		}
	}
}

// serveDebugSocket serves pprof on a unix socket, as kube's debug socket.
func serveDebugSocket(path string) (stop func(), err error) {
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("debug socket: %w", err)
	}
	mux := http.NewServeMux()
	for path, h := range pprofHandlers() {
		mux.Handle(path, h)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return func() { _ = srv.Close(); _ = os.Remove(path) }, nil
}
