package cache

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/embedded"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagetest"
)

// One etcd serves the whole package; every store gets its own prefix.
var (
	server   *embedded.Server
	prefixes atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "capstan-cache-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	server, err = embedded.Start(context.Background(), embedded.Config{
		Dir: dir, UnsafeNoFsync: true,
		// Short, so that RunTestWatch sees progress bookmarks quickly.
		WatchProgressNotifyInterval: 200 * time.Millisecond,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer server.Close()
	return m.Run()
}

// newTestStore returns a ConfigMap store under a fresh etcd prefix.
func newTestStore(t testing.TB) *etcd3.Store {
	t.Helper()
	s, err := etcd3.New(etcd3.Config{
		Client:         server.Client(),
		Codec:          storagetest.NewCodec(),
		NewFunc:        storagetest.NewObject,
		NewListFunc:    storagetest.NewList,
		Prefix:         fmt.Sprintf("/test-%d/registry", prefixes.Add(1)),
		ResourcePrefix: storagetest.ResourcePrefix,
		GroupResource:  schema.GroupResource{Resource: "configmaps"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keptObjects, as a test's Config.Codec, makes newTestCacher run a cache
// that keeps objects decoded (no codec); otherwise the cache keeps them
// encoded with the test store's codec, as the server's do.
var keptObjects runtime.Codec = noCodec{}

type noCodec struct{ runtime.Codec }

// newTestCacher runs a ready cache over s until the test ends; cfg's
// Storage, NewFunc, NewListFunc and ResourcePrefix are filled in, and
// Codec unless it is set.
func newTestCacher(t testing.TB, s storage.Interface, cfg Config) *Cacher {
	t.Helper()
	cfg.Storage, cfg.NewFunc, cfg.NewListFunc = s, storagetest.NewObject, storagetest.NewList
	switch cfg.Codec {
	case nil:
		cfg.Codec = storagetest.NewCodec()
	case keptObjects:
		cfg.Codec = nil
	}
	cfg.ResourcePrefix = storagetest.ResourcePrefix
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := c.Wait(wctx); err != nil {
		t.Fatalf("cache not ready: %v", err)
	}
	return c
}

// compactor compacts etcd and tells the cache, as Config.Compactions does
// in a server.
func compactor(c *Cacher) storagetest.CompactFunc {
	return func(ctx context.Context, rev uint64) error {
		if _, err := server.Client().Compact(ctx, int64(rev)); err != nil {
			return err
		}
		c.Compact(rev)
		return nil
	}
}
