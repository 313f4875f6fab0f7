package nodeport

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"os"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/embedded/embeddedtest"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagecodec"
)

var etcd embeddedtest.Shared

func TestMain(m *testing.M) { os.Exit(etcd.Main(m)) }

// setup returns the bitmap storage and a services store under a fresh
// prefix, and the prefix.
func setup(t *testing.T) (storage.Interface, *registry.Store, string) {
	t.Helper()
	etcdServer := etcd.Server(t)
	prefix := etcd.Prefix()
	codec := storagecodec.New(scheme.Scheme, scheme.Codecs, corev1.SchemeGroupVersion)
	bitmap, err := etcd3.New(etcd3.Config{Client: etcdServer.Client(), Codec: codec, Prefix: prefix, ResourcePrefix: Key,
		NewFunc: func() runtime.Object { return &corev1.RangeAllocation{} }, NewListFunc: func() runtime.Object { return &metav1.List{} },
		GroupResource: schema.GroupResource{Resource: "servicenodeportallocations"}})
	if err != nil {
		t.Fatal(err)
	}
	newSvc, newList := func() runtime.Object { return &corev1.Service{} }, func() runtime.Object { return &corev1.ServiceList{} }
	gr := schema.GroupResource{Resource: "services"}
	st, err := etcd3.New(etcd3.Config{Client: etcdServer.Client(), Codec: codec, Prefix: prefix, ResourcePrefix: "/services/specs",
		NewFunc: newSvc, NewListFunc: newList, GroupResource: gr})
	if err != nil {
		t.Fatal(err)
	}
	services := registry.NewStore(registry.StoreConfig{Resource: gr, Kind: "Service", New: newSvc, NewList: newList,
		KeyPrefix: "/services/specs", Strategy: core.ServiceStrategy{}, Storage: st})
	return bitmap, services, prefix
}

func portRange(t *testing.T, s string) utilnet.PortRange {
	pr, err := utilnet.ParsePortRange(s)
	if err != nil {
		t.Fatal(err)
	}
	return *pr
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestAllocator(t *testing.T) {
	ctx := context.Background()
	bitmap, services, prefix := setup(t)
	a := New(bitmap, portRange(t, "30000-30019"))
	if err := a.Allocate(ctx, 30001); err == nil || err.Error() != "cannot allocate resources of type servicenodeportallocations at this time" {
		t.Fatalf("before the first repair: %v", err)
	}
	if err := (&Repair{Allocator: a, Services: services, Logger: discard()}).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		p, err := a.AllocateNext(ctx)
		if err != nil || p < 30016 {
			t.Fatalf("allocation %d from the upper band: %d %v", i, p, err)
		}
	}
	if err := a.Allocate(ctx, 30003); err != nil {
		t.Fatal(err)
	}
	err := a.Allocate(ctx, 30003)
	if !errors.Is(err, ErrAllocated) || err.Error() != "provided port is already allocated" {
		t.Fatalf("taken: %v", err)
	}
	err = a.Allocate(ctx, 31000)
	if err == nil || err.Error() != "provided port is not in the valid range. The range of valid ports is 30000-30019" {
		t.Fatalf("out of range: %v", err)
	}
	for range 15 {
		if _, err := a.AllocateNext(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.AllocateNext(ctx); !errors.Is(err, ErrFull) {
		t.Fatalf("full: %v", err)
	}
	if err := a.Release(ctx, 30003); err != nil {
		t.Fatal(err)
	}
	if has, _ := a.Has(ctx, 30003); has {
		t.Fatal("released port still allocated")
	}
	if p, err := a.AllocateNext(ctx); err != nil || p != 30003 {
		t.Fatalf("after release: %d %v", p, err)
	}
	checkStored(t, prefix, "30000-30019", 20)
}

// checkStored reads the bitmap as kube would: the key, the range and the
// number of bits set.
func checkStored(t *testing.T, prefix, wantRange string, wantBits int) {
	t.Helper()
	resp, err := etcd.Server(t).Client().Get(context.Background(), prefix+Key, clientv3.WithLimit(1))
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("no bitmap at %s%s: %v", prefix, Key, err)
	}
	codec := storagecodec.New(scheme.Scheme, scheme.Codecs, corev1.SchemeGroupVersion)
	obj, err := runtime.Decode(codec, resp.Kvs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	ra := obj.(*corev1.RangeAllocation)
	bits, n := new(big.Int).SetBytes(ra.Data), 0
	for i := range bits.BitLen() {
		n += int(bits.Bit(i))
	}
	if ra.Range != wantRange || n != wantBits {
		t.Errorf("stored range %q with %d ports, want %q with %d", ra.Range, n, wantRange, wantBits)
	}
}

func TestRepair(t *testing.T) {
	ctx := context.Background()
	bitmap, services, prefix := setup(t)
	a := New(bitmap, portRange(t, "30000-30099"))
	r := &Repair{Allocator: a, Services: services, Logger: discard()}
	if err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "default"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, ClusterIP: "10.0.0.5", ClusterIPs: []string{"10.0.0.5"},
		Ports: []corev1.ServicePort{{Name: "a", Port: 53, NodePort: 30010}, {Name: "b", Port: 53, Protocol: corev1.ProtocolUDP, NodePort: 30010}},
	}}
	core.DefaultService(svc)
	if _, err := services.Create(request.WithNamespace(ctx, "default"), svc, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 30010 is used but not in the bitmap; 30020 is in it but unused.
	if err := a.Allocate(ctx, 30020); err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 3; run++ {
		if err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		used, _ := a.Has(ctx, 30010)
		leaked, _ := a.Has(ctx, 30020)
		if !used || leaked != (run < 3) {
			t.Fatalf("run %d: 30010 allocated %v, leaked 30020 allocated %v", run, used, leaked)
		}
	}
	checkStored(t, prefix, "30000-30099", 1)

	// A new range: the bitmap is rewritten for it.
	a2 := New(bitmap, portRange(t, "30005-30200"))
	if err := a2.Allocate(ctx, 30100); err == nil {
		t.Fatal("a bitmap of another range is used")
	}
	if err := (&Repair{Allocator: a2, Services: services, Logger: discard()}).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if has, _ := a2.Has(ctx, 30010); !has {
		t.Error("the new bitmap lost a used port")
	}
	checkStored(t, prefix, "30005-30200", 1)
}
