package clusterip

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/apis/networking"
	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/storage/embedded/embeddedtest"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagecodec"
)

// The tests run on a real embedded etcd, started by the first test that
// needs it; each test gets its own key prefix.
var etcd embeddedtest.Shared

func TestMain(m *testing.M) { os.Exit(etcd.Main(m)) }

// stores are the registry stores of one test.
type stores struct {
	ips, cidrs, services *registry.Store
}

func newStores(t *testing.T) stores {
	t.Helper()
	prefix := etcd.Prefix()
	return stores{
		ips: newStore(t, prefix, networkingv1.SchemeGroupVersion, "ipaddresses", "IPAddress", networking.IPAddressStrategy{},
			func() runtime.Object { return &networkingv1.IPAddress{} }, func() runtime.Object { return &networkingv1.IPAddressList{} }),
		cidrs: newStore(t, prefix, networkingv1.SchemeGroupVersion, "servicecidrs", "ServiceCIDR", networking.ServiceCIDRStrategy{},
			func() runtime.Object { return &networkingv1.ServiceCIDR{} }, func() runtime.Object { return &networkingv1.ServiceCIDRList{} }),
		services: newStore(t, prefix, corev1.SchemeGroupVersion, "services", "Service", core.ServiceStrategy{},
			func() runtime.Object { return &corev1.Service{} }, func() runtime.Object { return &corev1.ServiceList{} }),
	}
}

func newStore(t *testing.T, prefix string, gv schema.GroupVersion, resource, kind string, strategy registry.Strategy,
	newFunc, newList func() runtime.Object) *registry.Store {
	t.Helper()
	gr := schema.GroupResource{Group: gv.Group, Resource: resource}
	st, err := etcd3.New(etcd3.Config{
		Client: etcd.Server(t).Client(), Codec: storagecodec.New(scheme.Scheme, scheme.Codecs, gv), NewFunc: newFunc, NewListFunc: newList,
		Prefix: prefix, ResourcePrefix: "/" + resource, GroupResource: gr,
	})
	if err != nil {
		t.Fatal(err)
	}
	return registry.NewStore(registry.StoreConfig{Resource: gr, Kind: kind, New: newFunc, NewList: newList, Strategy: strategy, Storage: st})
}

// addCIDR stores a ServiceCIDR.
func (s stores) addCIDR(t *testing.T, name string, cidrs ...string) {
	t.Helper()
	c := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	if _, err := s.cidrs.Create(context.Background(), c, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
