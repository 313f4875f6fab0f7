package etcd3

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage/embedded"
	"github.com/capstan-io/capstan/storage/storagetest"
)

// One etcd serves the whole package; every store gets its own prefix.
var (
	server   *embedded.Server
	external *clientv3.Client // reaches server through its endpoints, as --etcd-servers does
	prefixes atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "capstan-etcd3-test-")
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
	external, err = clientv3.New(clientv3.Config{Endpoints: server.Endpoints(), DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer external.Close()
	return m.Run()
}

// newTestStore returns a ConfigMap store on client under a fresh prefix.
func newTestStore(t testing.TB, client *clientv3.Client) *Store {
	t.Helper()
	s, err := New(Config{
		Client:         client,
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

func compactor(client *clientv3.Client) storagetest.CompactFunc {
	return func(ctx context.Context, rev uint64) error {
		_, err := client.Compact(ctx, int64(rev))
		return err
	}
}

// forEachClient runs f against a store on the embedded server's own client
// and on a client built from its endpoints.
func forEachClient(t *testing.T, f func(t *testing.T, s *Store, compact storagetest.CompactFunc)) {
	for name, c := range map[string]*clientv3.Client{"embedded": server.Client(), "external": external} {
		t.Run(name, func(t *testing.T) { f(t, newTestStore(t, c), compactor(c)) })
	}
}
