package testkit

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/testserver"
)

// Server is a capstan started in-process for a test, with its own data dir
// and embedded etcd, on a free loopback port: a testserver.Server with the
// helpers capstan's own tests use.
type Server struct {
	DataDir    string
	Kubeconfig string
	URL        string
	// Config is the admin's client config.
	Config *rest.Config

	flags []string
	opts  []testserver.Option
	ts    *testserver.Server
}

// StartServer starts capstan with the given extra flags and waits until
// /readyz passes. It is stopped when the test ends.
func StartServer(t testing.TB, flags ...string) *Server {
	t.Helper()
	s := &Server{DataDir: t.TempDir(), flags: flags}
	s.start(t)
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// StartServerWith starts capstan as StartServer does, configured by opts.
func StartServerWith(t testing.TB, opts ...testserver.Option) *Server {
	t.Helper()
	s := &Server{DataDir: t.TempDir(), opts: opts}
	s.start(t)
	t.Cleanup(func() { s.Stop(t) })
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	ts, err := testserver.StartInDirWith(s.DataDir, append([]testserver.Option{testserver.WithFlags(s.flags...)}, s.opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	s.ts, s.Kubeconfig, s.URL, s.Config = ts, ts.KubeconfigFile, ts.URL, ts.RESTConfig()
	// No client-side throttling: client-go's default 5 requests a second
	// would pace the tests' polls and fills, not the server.
	s.Config.QPS, s.Config.Burst = -1, 0
}

// Client returns a clientset for the admin.
func (s *Server) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Stop shuts the server down and waits for it. Stopping twice is harmless.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.ts == nil {
		return
	}
	if err := s.ts.Stop(); err != nil {
		t.Error(err)
	}
}

// Restart stops the server and starts it again on the same data dir.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	s.start(t)
}

// CompactEtcd compacts the server's etcd up to its current revision, as
// the compactor would after an interval, and returns that revision: every
// resourceVersion older than it is gone from etcd at once, and from the
// watch caches within a second or so.
func (s *Server) CompactEtcd(t testing.TB) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rev, err := s.ts.CompactEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// EtcdKeys returns every key in the server's etcd, sorted.
func (s *Server) EtcdKeys(t testing.TB) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.ts.EtcdClient().Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatalf("listing etcd keys: %v", err)
	}
	keys := make([]string, len(resp.Kvs))
	for i, kv := range resp.Kvs {
		keys[i] = string(kv.Key)
	}
	return keys
}

// FreePort returns a free loopback TCP port.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// EtcdValue returns the value stored at key in the server's etcd, nil if
// there is none.
func (s *Server) EtcdValue(t testing.TB, key string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.ts.EtcdClient().Get(ctx, key)
	if err != nil {
		t.Fatalf("reading etcd key %s: %v", key, err)
	}
	if len(resp.Kvs) == 0 {
		return nil
	}
	return resp.Kvs[0].Value
}

// EtcdPut stores value at key in the server's etcd, below the API.
func (s *Server) EtcdPut(t testing.TB, key string, value []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.ts.EtcdClient().Put(ctx, key, string(value)); err != nil {
		t.Fatalf("writing etcd key %s: %v", key, err)
	}
}

// StartError runs capstan with the given flags and returns the error it
// stops with before serving; a server that starts fails the test.
func StartError(t testing.TB, flags ...string) error {
	t.Helper()
	o := app.NewOptions()
	fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
	// Deprecation notices (--admission-control) are for a user at a
	// terminal; a test that passes prints nothing.
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	args := append([]string{"--data-dir", t.TempDir(), "--secure-port", "0", "--bind-address", "127.0.0.1", "--unsafe-no-fsync"}, flags...)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, o, io.Discard, func(*app.Process) { started <- struct{}{} }) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("capstan stopped without an error")
		}
		return err
	case <-started:
		cancel()
		<-done
		t.Fatal("capstan started")
	}
	return nil
}

// EtcdEndpoints are the client URLs of the server's etcd, for another
// server (an extension API server) to store its objects beside capstan's.
func (s *Server) EtcdEndpoints() []string { return s.ts.EtcdClient().Endpoints() }
