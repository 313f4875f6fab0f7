package core

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage/embedded"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagetest"
)

// The tests of the REST storages (binding, eviction) run on a real embedded
// etcd, started by the first test that needs it.
var (
	etcdOnce   sync.Once
	etcdServer *embedded.Server
	etcdDir    string
	etcdErr    error
	prefixes   atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if etcdServer != nil {
		etcdServer.Close()
	}
	if etcdDir != "" {
		os.RemoveAll(etcdDir)
	}
	os.Exit(code)
}

// newPodStore returns a pods Store on the embedded etcd under a fresh
// prefix.
func newPodStore(t *testing.T) *registry.Store {
	t.Helper()
	etcdOnce.Do(func() {
		etcdDir, etcdErr = os.MkdirTemp("", "capstan-core-test-")
		if etcdErr == nil {
			etcdServer, etcdErr = embedded.Start(context.Background(), embedded.Config{Dir: etcdDir, UnsafeNoFsync: true})
		}
	})
	if etcdErr != nil {
		t.Fatal(etcdErr)
	}
	gr := schema.GroupResource{Resource: "pods"}
	newPod := func() runtime.Object { return &corev1.Pod{} }
	newList := func() runtime.Object { return &corev1.PodList{} }
	s, err := etcd3.New(etcd3.Config{
		Client: etcdServer.Client(), Codec: storagetest.NewCodec(), NewFunc: newPod, NewListFunc: newList,
		Prefix: fmt.Sprintf("/test-%d/registry", prefixes.Add(1)), ResourcePrefix: "/pods", GroupResource: gr,
	})
	if err != nil {
		t.Fatal(err)
	}
	return registry.NewStore(registry.StoreConfig{
		Resource: gr, Kind: "Pod", New: newPod, NewList: newList,
		Strategy: PodStrategy{}, Storage: s, ReturnDeletedObject: true,
	})
}

// updateTo is an update that replaces the object with obj.
func updateTo(obj runtime.Object) rest.UpdatedObjectFunc {
	return func(context.Context, runtime.Object) (runtime.Object, error) { return obj.DeepCopyObject(), nil }
}
