package testkit

import (
	"context"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/storage/etcd3"
)

// Server is a capstan started in-process for a test, with its own data dir
// and embedded etcd, on a free loopback port.
type Server struct {
	DataDir    string
	Kubeconfig string
	URL        string
	// Config is the admin's client config.
	Config *rest.Config

	flags     []string
	cancel    context.CancelFunc
	done      chan error
	etcd      *clientv3.Client
	compactor *etcd3.Compactor
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

func (s *Server) start(t testing.TB) {
	t.Helper()
	o := app.NewOptions()
	fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
	o.AddFlags(fs)
	args := append([]string{"--data-dir", s.DataDir, "--secure-port", "0", "--bind-address", "127.0.0.1", "--unsafe-no-fsync"}, s.flags...)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("capstan flags: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	ready := make(chan *app.Config, 1)
	var out io.Writer = io.Discard
	if os.Getenv("CAPSTAN_TEST_LOG") != "" {
		out = os.Stderr
	}
	go func() { s.done <- app.Run(ctx, o, out, func(c *app.Config) { ready <- c }) }()
	select {
	case c := <-ready:
		s.Kubeconfig, s.URL, s.etcd, s.compactor = c.Kubeconfig, c.URL, c.EtcdClient(), c.Compactor()
	case err := <-s.done:
		t.Fatalf("capstan did not start: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("capstan did not start within a minute")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	s.Config = cfg
	s.waitReady(t)
}

// waitReady polls /readyz until it passes.
func (s *Server) waitReady(t testing.TB) {
	t.Helper()
	client := s.Client(t)
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, nil
	})
	if err != nil {
		// Say which checks fail, so that a slow start can be told apart
		// from a hook that never finishes.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		body, verr := client.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "1").DoRaw(ctx)
		t.Fatalf("capstan never became ready: %v\n/readyz?verbose: %s %v", err, body, verr)
	}
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
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("capstan stopped with an error: %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("capstan did not stop within a minute")
	}
}

// Restart stops the server and starts it again on the same data dir.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	s.start(t)
}

// CompactEtcd compacts the server's etcd up to its current revision, as the
// compactor would after an interval, and returns that revision: every
// resourceVersion older than it is gone from etcd at once, and from the
// watch caches within a second or so.
func (s *Server) CompactEtcd(t testing.TB) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.etcd.Get(ctx, "compact-probe", clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("reading etcd's revision: %v", err)
	}
	rev := resp.Header.Revision
	if err := s.compactor.CompactNow(ctx, rev); err != nil {
		t.Fatalf("compacting etcd to %d: %v", rev, err)
	}
	return rev
}

// EtcdKeys returns every key in the server's etcd, sorted.
func (s *Server) EtcdKeys(t testing.TB) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.etcd.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithKeysOnly())
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
	resp, err := s.etcd.Get(ctx, key)
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
	if _, err := s.etcd.Put(ctx, key, string(value)); err != nil {
		t.Fatalf("writing etcd key %s: %v", key, err)
	}
}

// StartError runs capstan with the given flags and returns the error it
// stops with before serving; a server that starts fails the test.
func StartError(t testing.TB, flags ...string) error {
	t.Helper()
	o := app.NewOptions()
	fs := pflag.NewFlagSet("capstan", pflag.ContinueOnError)
	o.AddFlags(fs)
	args := append([]string{"--data-dir", t.TempDir(), "--secure-port", "0", "--bind-address", "127.0.0.1", "--unsafe-no-fsync"}, flags...)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, o, io.Discard, func(*app.Config) { started <- struct{}{} }) }()
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
