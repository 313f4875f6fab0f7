package controlplane

import (
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	netutils "k8s.io/utils/net"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/controlplane/allocators/clusterip"
	"github.com/capstan-io/capstan/controlplane/allocators/nodeport"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/server"
	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagecodec"
)

// ServicesConfig is where services get their cluster IPs and node ports,
// and where the kubernetes Service sends pods.
type ServicesConfig struct {
	// ClusterIPRanges is --service-cluster-ip-range: one CIDR, or two of
	// different families. The first address of the first one is the
	// kubernetes Service's.
	ClusterIPRanges []net.IPNet
	// NodePortRange is --service-node-port-range.
	NodePortRange utilnet.PortRange
	// PublicIP and PublicPort are where clients in the cluster reach this
	// server: the kubernetes Service's endpoint, unless PublicIP is
	// loopback.
	PublicIP   net.IP
	PublicPort int
	// NoEndpointReconciler is --endpoint-reconciler-type=none: the
	// kubernetes Service's endpoints are left to others.
	NoEndpointReconciler bool
	// RepairInterval is how often allocations are checked against the
	// services; 3 minutes when zero, as in kube.
	RepairInterval time.Duration
}

// DefaultServiceClusterIPRange and DefaultServiceNodePortRange are the
// defaults of the flags, kube's.
const (
	DefaultServiceClusterIPRange = "10.0.0.0/24"
	DefaultServiceNodePortRange  = "30000-32767"
)

// KubernetesServiceIP is the first address of the primary range.
func (c ServicesConfig) KubernetesServiceIP() (net.IP, error) {
	if len(c.ClusterIPRanges) == 0 {
		return nil, fmt.Errorf("no service cluster IP range")
	}
	return netutils.GetIndexedIP(&c.ClusterIPRanges[0], 1)
}

// families are the IP families of the ranges, the primary one first.
func (c ServicesConfig) families() []corev1.IPFamily {
	var out []corev1.IPFamily
	for _, r := range c.ClusterIPRanges {
		if netutils.IsIPv6CIDR(&r) {
			out = append(out, corev1.IPv6Protocol)
		} else {
			out = append(out, corev1.IPv4Protocol)
		}
	}
	return out
}

// servicesBuilt is what installServices made.
type servicesBuilt struct {
	alloc    *core.ServiceAllocators
	services *registry.Store
	ips      *registry.Store
	cidrs    *registry.Store
	ipAlloc  *clusterip.Allocator
	ports    *nodeport.Allocator
	leases   storage.Interface
}

// installServices adds services (with their allocators) and endpoints to
// core/v1, builds networking.k8s.io/v1 (servicecidrs, ipaddresses) and
// registers the hooks that keep them: the default ServiceCIDR, the repair
// of allocations and the kubernetes Service.
func (c Config) installServices(s *server.Server, coreGroup *builtGroup) (builtGroup, error) {
	f := c.stores
	netGroup, err := f.networkingGroup()
	if err != nil {
		return netGroup, err
	}
	b := servicesBuilt{ips: netGroup.stores["ipaddresses"], cidrs: netGroup.stores["servicecidrs"]}
	serviceIP, err := c.Services.KubernetesServiceIP()
	if err != nil {
		return netGroup, err
	}
	if b.leases, err = f.rawStorage("masterleases", "/masterleases",
		func() runtime.Object { return &corev1.Endpoints{} }, func() runtime.Object { return &corev1.EndpointsList{} }); err != nil {
		return netGroup, err
	}
	ranges, err := f.rawStorage("servicenodeportallocations", nodeport.Key,
		func() runtime.Object { return &corev1.RangeAllocation{} }, func() runtime.Object { return &metav1.List{} }) // never listed
	if err != nil {
		return netGroup, err
	}
	b.ports = nodeport.New(ranges, c.Services.NodePortRange)
	b.ipAlloc = clusterip.New(b.ips, b.cidrs, serviceIP)
	b.alloc = &core.ServiceAllocators{IPs: b.ipAlloc, Ports: b.ports, Families: c.Services.families()}
	resources, err := f.serviceResources(&b)
	if err != nil {
		return netGroup, err
	}
	v := &coreGroup.group.Versions[0]
	v.Resources = append(v.Resources, resources...)
	coreGroup.stores["services"] = b.services
	c.addServiceHooks(s, &b, serviceIP)
	return netGroup, nil
}

// serviceResources are services (+status) served by ServiceREST, and
// endpoints, stored where kube stores them.
func (f *storeBuilder) serviceResources(b *servicesBuilt) ([]endpoints.Resource, error) {
	gv := corev1.SchemeGroupVersion
	svcSpec := resourceSpec{name: "services", kind: "Service", keyPrefix: "/services/specs", strategy: core.ServiceStrategy{},
		shortNames: []string{"svc"}, categories: categoryAll, status: core.ServiceStatusStrategy{}, returnDeleted: true,
		new: func() runtime.Object { return &corev1.Service{} }, newList: func() runtime.Object { return &corev1.ServiceList{} }}
	store, out, err := f.build(gv, svcSpec)
	if err != nil {
		return nil, err
	}
	b.services = store
	rest := core.NewServiceREST(store, b.alloc)
	out[0].Storage, out[1].Storage = rest, rest.Status()
	epSpec := resourceSpec{name: "endpoints", kind: "Endpoints", keyPrefix: "/services/endpoints", strategy: core.EndpointsStrategy{},
		shortNames: []string{"ep"},
		new:        func() runtime.Object { return &corev1.Endpoints{} }, newList: func() runtime.Object { return &corev1.EndpointsList{} }}
	_, eps, err := f.build(gv, epSpec)
	if err != nil {
		return nil, err
	}
	return append(out, eps...), nil
}

// rawStorage is etcd storage of core/v1 objects the API does not serve
// (the node port bitmap, the servers' leases), without a watch cache.
func (f *storeBuilder) rawStorage(resource, keyPrefix string, newFunc, newList func() runtime.Object) (storage.Interface, error) {
	return etcd3.New(etcd3.Config{
		Client: f.Client, Codec: storagecodec.New(f.Scheme, f.Codecs, corev1.SchemeGroupVersion),
		NewFunc: newFunc, NewListFunc: newList, Prefix: f.Prefix, ResourcePrefix: keyPrefix,
		GroupResource: schema.GroupResource{Resource: resource}, Logger: f.Logger,
	})
}
