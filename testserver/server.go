// Package testserver starts capstan inside a Go test: a fresh server with
// its own embedded etcd on a free loopback port, for testing controllers
// against the real API (as controller-runtime's envtest does with
// kube-apiserver and etcd processes), stopped when the test ends.
//
//	func TestReconciler(t *testing.T) {
//		t.Parallel()
//		s := testserver.Start(t, testserver.WithCRDPaths("config/crd/bases"))
//		c, _ := client.New(s.Config, client.Options{})
//		...
//	}
package testserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/storage/etcd3"
)

// TB is the part of testing.TB Start uses.
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Server is a running capstan.
type Server struct {
	// Config is the admin's client config (a system:masters client
	// certificate). Each call of RESTConfig returns a copy to change.
	Config *rest.Config
	// Kubeconfig is the admin kubeconfig; KubeconfigFile holds it.
	Kubeconfig     []byte
	KubeconfigFile string
	// URL is the server's https URL; DataDir holds its etcd, certificates
	// and kubeconfig.
	URL     string
	DataDir string

	flags     []string
	logs      bool
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	cancel    context.CancelFunc
	done      chan error
	etcd      *clientv3.Client
	compactor *etcd3.Compactor
}

// Start starts capstan with opts and returns once it is ready (/readyz)
// and the CRDs asked for are served. It is stopped when t ends. Servers of
// parallel tests are independent.
func Start(t TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s, err := startInDir(t.TempDir(), o)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("testserver: %v", err)
		}
	})
	if err := s.installCRDs(o); err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return s
}

// StartInDir starts capstan on dataDir with flags (after Start's own) and
// waits until it is ready; the caller stops it. logs sends its log to
// stderr.
func StartInDir(dataDir string, logs bool, flags ...string) (*Server, error) {
	return startInDir(dataDir, options{logs: logs, flags: flags})
}

// StartInDirWith starts capstan on dataDir as StartInDir does, configured
// by opts (their CRDs are not installed).
func StartInDirWith(dataDir string, opts ...Option) (*Server, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return startInDir(dataDir, o)
}

func startInDir(dataDir string, o options) (*Server, error) {
	s := &Server{DataDir: dataDir, flags: o.flags, logs: o.logs || os.Getenv("CAPSTAN_TEST_LOG") != "", dial: o.dial}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) start() error {
	o := app.NewOptions()
	fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	args := append([]string{"--data-dir", s.DataDir, "--secure-port", "0", "--bind-address", "127.0.0.1", "--unsafe-no-fsync"}, s.flags...)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("capstan flags: %w", err)
	}
	o.EgressSelector.ClusterDial = s.dial
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	ready := make(chan *app.Process, 1)
	var out io.Writer = io.Discard
	if s.logs {
		out = os.Stderr
	}
	go func() { s.done <- app.Run(ctx, o, out, func(c *app.Process) { ready <- c }) }()
	var c *app.Process
	select {
	case c = <-ready:
	case err := <-s.done:
		s.cancel = nil
		return fmt.Errorf("capstan did not start: %w", err)
	case <-time.After(time.Minute):
		s.stop()
		return errors.New("capstan did not start within a minute")
	}
	s.URL, s.KubeconfigFile, s.etcd, s.compactor = c.URL, c.Kubeconfig, c.EtcdClient(), c.Compactor()
	if err := s.loadKubeconfig(); err != nil {
		s.stop()
		return err
	}
	if err := s.waitReady(); err != nil {
		s.stop()
		return err
	}
	return nil
}

func (s *Server) loadKubeconfig() error {
	if s.KubeconfigFile == "" {
		return errors.New("capstan wrote no admin kubeconfig (serving certificate given by flags?)")
	}
	data, err := os.ReadFile(s.KubeconfigFile)
	if err != nil {
		return fmt.Errorf("admin kubeconfig: %w", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return fmt.Errorf("admin kubeconfig: %w", err)
	}
	s.Kubeconfig, s.Config = data, cfg
	return nil
}

// RESTConfig returns a copy of the admin's client config.
func (s *Server) RESTConfig() *rest.Config { return rest.CopyConfig(s.Config) }

// Stop shuts the server down and waits for it; stopping twice is harmless.
func (s *Server) Stop() error {
	if s.cancel == nil {
		return nil
	}
	return s.stop()
}

func (s *Server) stop() error {
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			return fmt.Errorf("capstan stopped with an error: %w", err)
		}
		return nil
	case <-time.After(time.Minute):
		return errors.New("capstan did not stop within a minute")
	}
}

// Restart stops the server and starts it again on the same data dir.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.start()
}

// EtcdClient is the client of the server's etcd, to reach below the API.
func (s *Server) EtcdClient() *clientv3.Client { return s.etcd }

// CompactEtcd compacts the server's etcd up to its current revision, as
// the compactor would after an interval, and returns that revision.
func (s *Server) CompactEtcd(ctx context.Context) (int64, error) {
	resp, err := s.etcd.Get(ctx, "compact-probe", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("reading etcd's revision: %w", err)
	}
	rev := resp.Header.Revision
	if err := s.compactor.CompactNow(ctx, rev); err != nil {
		return 0, fmt.Errorf("compacting etcd to %d: %w", rev, err)
	}
	return rev, nil
}
