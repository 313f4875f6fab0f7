package core

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage/embedded/embeddedtest"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagetest"
)

// The tests of the REST storages (binding, eviction) run on a real embedded
// etcd, started by the first test that needs it.
var etcd embeddedtest.Shared

func TestMain(m *testing.M) { os.Exit(etcd.Main(m)) }

// newPodStore returns a pods Store on the embedded etcd under a fresh
// prefix.
func newPodStore(t *testing.T) *registry.Store {
	t.Helper()
	etcdServer := etcd.Server(t)
	gr := schema.GroupResource{Resource: "pods"}
	newPod := func() runtime.Object { return &corev1.Pod{} }
	newList := func() runtime.Object { return &corev1.PodList{} }
	s, err := etcd3.New(etcd3.Config{
		Client: etcdServer.Client(), Codec: storagetest.NewCodec(), NewFunc: newPod, NewListFunc: newList,
		Prefix: etcd.Prefix(), ResourcePrefix: "/pods", GroupResource: gr,
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
