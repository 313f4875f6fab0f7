// Package embeddedtest shares one embedded etcd among the tests of a
// package: started by the first test that needs it, stopped after the last,
// with a fresh key prefix for each test.
package embeddedtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/capstan-io/capstan/storage/embedded"
)

// Shared is a package's etcd. The zero value is ready to use.
type Shared struct {
	once     sync.Once
	server   *embedded.Server
	dir      string
	err      error
	prefixes atomic.Int64
}

// Server returns the etcd, starting it on first use (fsync off).
func (s *Shared) Server(t testing.TB) *embedded.Server {
	t.Helper()
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "capstan-test-etcd-"); s.err != nil {
			return
		}
		s.server, s.err = embedded.Start(context.Background(), embedded.Config{Dir: s.dir, UnsafeNoFsync: true})
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.server
}

// Prefix returns a fresh --etcd-prefix for one test.
func (s *Shared) Prefix() string {
	return fmt.Sprintf("/test-%d/registry", s.prefixes.Add(1))
}

// Main runs the package's tests and then stops the etcd, for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(etcd.Main(m)) }
func (s *Shared) Main(m *testing.M) int {
	code := m.Run()
	if s.server != nil {
		_ = s.server.Close()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
	return code
}
