package embedded

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// memberName names the single member. It is stored in the data directory,
// so it must not change between restarts on the same Dir.
const memberName = "capstan"

// peerURL identifies the member inside its one-member cluster. Nothing
// listens on it: a cluster of one never talks to peers, and not opening a
// peer port keeps the server invisible to the network and avoids a port
// clash when several servers run on one machine (tests).
var peerURL = url.URL{Scheme: "http", Host: "127.0.0.1:2380"}

// Server is a running embedded etcd and a client connected to it.
type Server struct {
	etcd      *embed.Etcd
	client    *clientv3.Client
	endpoints []string

	closing   atomic.Bool // silences etcd's logger while it shuts down
	closeOnce sync.Once
	closeErr  error
}

// Start starts an etcd server whose data lives in cfg.Dir, serving clients
// on a free loopback port, and waits until it is ready to serve.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Dir == "" {
		return nil, errors.New("embedded etcd: Dir is required")
	}
	s := &Server{}
	lg := newZapLogger(cfg.Logger, &s.closing)
	e, err := embed.StartEtcd(etcdConfig(cfg, lg))
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: start: %w", err)
	}
	if err := waitReady(ctx, e, cfg.StartTimeout); err != nil {
		s.closing.Store(true)
		e.Close()
		return nil, err
	}
	s.etcd = e
	for _, l := range e.Clients {
		s.endpoints = append(s.endpoints, "http://"+l.Addr().String())
	}
	s.client, err = clientv3.New(clientv3.Config{
		Endpoints:   s.endpoints,
		DialTimeout: 10 * time.Second,
		DialOptions: cfg.DialOptions,
		Logger:      lg,
		// ctx bounds the start only; the client lives until Close.
		Context: context.WithoutCancel(ctx),
	})
	if err != nil {
		s.closing.Store(true)
		e.Close()
		return nil, fmt.Errorf("embedded etcd: client: %w", err)
	}
	return s, nil
}

// etcdConfig translates cfg into etcd's configuration, tuned for a quick
// start of a single member on loopback.
func etcdConfig(cfg Config, lg *zap.Logger) *embed.Config {
	ec := embed.NewConfig()
	ec.Name = memberName
	ec.Dir = cfg.Dir
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	ec.LogLevel = "error"

	// Port 0: the kernel picks a free port; Start reads it back from the
	// listener. The advertised URL is only published in the member list,
	// which nobody reads in a cluster of one.
	client := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	ec.ListenClientUrls = []url.URL{client}
	ec.AdvertiseClientUrls = []url.URL{client}
	ec.ListenPeerUrls = nil
	ec.AdvertisePeerUrls = []url.URL{peerURL}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	ec.ListenMetricsUrls = nil
	// The HTTP/JSON gateway dials the listen address, which is unknown
	// (port 0) when it is set up; capstan only speaks gRPC to etcd.
	ec.EnableGRPCGateway = false

	// A member alone elects itself after one election timeout; short ticks
	// make that wait (most of a cold start) short. Heartbeats go to no peer.
	// etcd fast-forwards a single member's ticks to one short of the
	// timeout, but raft randomizes the timeout up to twice its value, so
	// the wait is 1 to ElectionMs/TickMs ticks: the least timeout etcd
	// accepts (5 ticks) keeps it at 10-50 ms.
	ec.TickMs = 10
	ec.ElectionMs = 50

	ec.UnsafeNoFsync = cfg.UnsafeNoFsync
	if cfg.AutoCompactionRetention > 0 {
		ec.AutoCompactionMode = embed.CompactorModePeriodic
		ec.AutoCompactionRetention = cfg.AutoCompactionRetention.String()
	}
	if cfg.WatchProgressNotifyInterval > 0 {
		ec.WatchProgressNotifyInterval = cfg.WatchProgressNotifyInterval
	}
	if cfg.QuotaBackendBytes > 0 {
		ec.QuotaBackendBytes = cfg.QuotaBackendBytes
	}
	return ec
}

// waitReady waits until e has a leader and serves requests.
func waitReady(ctx context.Context, e *embed.Etcd, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = time.Minute
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("embedded etcd: %w", err)
	case <-timer.C:
		return fmt.Errorf("embedded etcd: not ready after %v", timeout)
	case <-ctx.Done():
		return fmt.Errorf("embedded etcd: waiting for readiness: %w", ctx.Err())
	}
}

// Client returns a client connected to the server. It is closed by Close.
func (s *Server) Client() *clientv3.Client { return s.client }

// Endpoints returns the URLs clients reach the server at, as given to
// --etcd-servers.
func (s *Server) Endpoints() []string { return append([]string(nil), s.endpoints...) }

// Close closes the client and stops the server, waiting until its data is
// written out. It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closing.Store(true)
		s.closeErr = s.client.Close()
		if errors.Is(s.closeErr, context.Canceled) {
			s.closeErr = nil
		}
		s.etcd.Close()
	})
	return s.closeErr
}
