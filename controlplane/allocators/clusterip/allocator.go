// Package clusterip allocates the cluster IPs of services as kube 1.37
// does: each allocated IP is a networking.k8s.io/v1 IPAddress object named
// after the address, with the service as its parent, inside one of the
// ServiceCIDRs. Creating the IPAddress is the lock: two servers racing for
// one address cannot both create it. Nothing is kept in memory, so any
// number of servers share the allocations through storage.
package clusterip

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/apis/networking"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/registry/rest"
)

// ManagedBy is the value of the managed-by label of the IPAddresses the
// allocator creates, kube's.
const ManagedBy = "ipallocator.k8s.io"

var (
	// ErrAllocated: the requested IP belongs to someone else.
	ErrAllocated = errors.New("provided IP is already allocated")
	// ErrMismatchedNetwork: the requested IP is in no ready ServiceCIDR.
	ErrMismatchedNetwork = errors.New("the provided network does not match the current range")
)

// IPAddressStore is the REST storage of IPAddresses the allocator writes
// through (the registry Store).
type IPAddressStore interface {
	rest.Creater
	rest.GracefulDeleter
	rest.Lister
	rest.Getter
}

// Allocator is a core.ClusterIPAllocator over IPAddress and ServiceCIDR
// storage.
type Allocator struct {
	ips   IPAddressStore
	cidrs rest.Lister
	// reserved are never allocated dynamically: the kubernetes Service's
	// IPs, which its controller asks for by address.
	reserved []netip.Addr
}

var _ core.ClusterIPAllocator = (*Allocator)(nil)

// New returns an allocator writing IPAddresses to ips within the
// ServiceCIDRs cidrs lists. reserved addresses are only allocated when
// asked for.
func New(ips IPAddressStore, cidrs rest.Lister, reserved ...net.IP) *Allocator {
	a := &Allocator{ips: ips, cidrs: cidrs}
	for _, ip := range reserved {
		if addr, ok := netip.AddrFromSlice(ip); ok {
			a.reserved = append(a.reserved, addr.Unmap())
		}
	}
	return a
}

// Allocate reserves ip for svc. A dry run only checks that ip is in a
// ready ServiceCIDR.
func (a *Allocator) Allocate(ctx context.Context, svc *corev1.Service, ip net.IP, dryRun bool) error {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return fmt.Errorf("invalid IP %v", ip)
	}
	addr = addr.Unmap()
	ranges, err := a.ranges(ctx, familyOf(addr))
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ranges, func(r ipRange) bool { return r.contains(addr) })
	if i < 0 {
		return ErrMismatchedNetwork
	}
	if dryRun {
		return nil
	}
	start := time.Now()
	err = a.create(ctx, addr, svc)
	metrics.ClusterIPAllocation(ranges[i].prefix.String(), "static", start, err)
	if err == nil {
		a.recordUsage(ctx, ranges[i])
	}
	return err
}

// AllocateNext reserves a free IP of family for svc: in each ready
// ServiceCIDR in turn, from a random place in its upper band, then in its
// lower band. A dry run answers the network address of the first CIDR, as
// kube does, without looking for a free one.
func (a *Allocator) AllocateNext(ctx context.Context, svc *corev1.Service, family corev1.IPFamily, dryRun bool) (net.IP, error) {
	ranges, err := a.ranges(ctx, family)
	if err != nil {
		return nil, err
	}
	if len(ranges) == 0 {
		return nil, core.ErrIPRangeFull
	}
	if dryRun {
		return net.IP(ranges[0].prefix.Addr().AsSlice()), nil
	}
	used, err := a.used(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range ranges {
		start := time.Now()
		addr, err := a.allocateIn(ctx, r, used, svc)
		metrics.ClusterIPAllocation(r.prefix.String(), "dynamic", start, err)
		if errors.Is(err, core.ErrIPRangeFull) {
			continue
		}
		if err != nil {
			return nil, err
		}
		used[addr] = true
		setUsage(r, used)
		return net.IP(addr.AsSlice()), nil
	}
	return nil, core.ErrIPRangeFull
}

// recordUsage sets the usage gauges of r from the stored IPAddresses.
func (a *Allocator) recordUsage(ctx context.Context, r ipRange) {
	if used, err := a.used(ctx); err == nil {
		setUsage(r, used)
	}
}

// setUsage sets the usage gauges of r, whose addresses in used are taken.
func setUsage(r ipRange, used map[netip.Addr]bool) {
	n := 0
	for addr := range used {
		if r.contains(addr) {
			n++
		}
	}
	metrics.ClusterIPUsage(r.prefix.String(), float64(n), float64(r.size)-float64(n))
}

// allocateIn tries the addresses of r not in used, upper band first.
func (a *Allocator) allocateIn(ctx context.Context, r ipRange, used map[netip.Addr]bool, svc *corev1.Service) (netip.Addr, error) {
	bands := [][2]uint64{{r.lower, r.size}, {0, r.lower}}
	for _, band := range bands {
		from, to := band[0], band[1]
		if from >= to {
			continue
		}
		n := to - from
		start := rand.Uint64N(n)
		// Past len(used)+1 distinct addresses one must be free, unless
		// other servers take them as we go.
		tries := min(n, uint64(len(used))+1+uint64(len(a.reserved))+raceAllowance)
		for i := range tries {
			addr := r.at(from + (start+i)%n)
			if used[addr] || slices.Contains(a.reserved, addr) {
				continue
			}
			err := a.create(ctx, addr, svc)
			if errors.Is(err, ErrAllocated) {
				continue
			}
			return addr, err
		}
	}
	return netip.Addr{}, core.ErrIPRangeFull
}

// raceAllowance is how many addresses another server may take under an
// allocation before it gives up on a range that is not full.
const raceAllowance = 64

// create writes the IPAddress of addr for svc; ErrAllocated if it exists.
func (a *Allocator) create(ctx context.Context, addr netip.Addr, svc *corev1.Service) error {
	_, err := a.ips.Create(ctx, NewIPAddress(addr.String(), svc), nil, &metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return ErrAllocated
	}
	return err
}

// Release deletes the IPAddress of ip; a missing one is no error.
func (a *Allocator) Release(ctx context.Context, ip net.IP) error {
	addr, ok := netip.AddrFromSlice(ip)
	if !ok {
		return fmt.Errorf("invalid IP %v", ip)
	}
	addr = addr.Unmap()
	_, _, err := a.ips.Delete(ctx, addr.String(), nil, &metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		a.releaseUsage(ctx, addr)
	}
	return err
}

// releaseUsage sets the usage gauges of the range addr was released from.
func (a *Allocator) releaseUsage(ctx context.Context, addr netip.Addr) {
	ranges, err := a.ranges(ctx, familyOf(addr))
	if err != nil {
		return
	}
	if i := slices.IndexFunc(ranges, func(r ipRange) bool { return r.contains(addr) }); i >= 0 {
		a.recordUsage(ctx, ranges[i])
	}
}

// used is the set of addresses with an IPAddress, whoever made it.
func (a *Allocator) used(ctx context.Context) (map[netip.Addr]bool, error) {
	list, err := a.ips.List(ctx, &rest.ListOptions{LabelSelector: labels.Everything()})
	if err != nil {
		return nil, err
	}
	used := map[netip.Addr]bool{}
	for _, ip := range list.(*networkingv1.IPAddressList).Items {
		if addr, err := netip.ParseAddr(ip.Name); err == nil {
			used[addr] = true
		}
	}
	return used, nil
}

// ranges are the allocatable ranges of family in the ready ServiceCIDRs,
// the default one ("kubernetes") first, each CIDR once.
func (a *Allocator) ranges(ctx context.Context, family corev1.IPFamily) ([]ipRange, error) {
	cidrs, err := ServiceCIDRs(ctx, a.cidrs)
	if err != nil {
		return nil, err
	}
	var out []ipRange
	seen := map[netip.Prefix]bool{}
	for _, c := range cidrs {
		if !networking.ServiceCIDRReady(&c) {
			continue
		}
		for _, s := range c.Spec.CIDRs {
			p, err := netip.ParsePrefix(s)
			if err != nil || familyOf(p.Addr()) != family || seen[p.Masked()] {
				continue
			}
			seen[p.Masked()] = true
			if r, ok := newRange(p); ok {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// DefaultServiceCIDRName is the ServiceCIDR made from
// --service-cluster-ip-range.
const DefaultServiceCIDRName = "kubernetes"

// ServiceCIDRs lists the ServiceCIDRs, the default one first.
func ServiceCIDRs(ctx context.Context, lister rest.Lister) ([]networkingv1.ServiceCIDR, error) {
	list, err := lister.List(ctx, &rest.ListOptions{LabelSelector: labels.Everything()})
	if err != nil {
		return nil, err
	}
	items := list.(*networkingv1.ServiceCIDRList).Items
	slices.SortStableFunc(items, func(x, y networkingv1.ServiceCIDR) int {
		switch {
		case x.Name == y.Name:
			return 0
		case x.Name == DefaultServiceCIDRName:
			return -1
		case y.Name == DefaultServiceCIDRName:
			return 1
		}
		return 0
	})
	return items, nil
}

// NewIPAddress is the IPAddress recording that ip belongs to svc.
func NewIPAddress(ip string, svc *corev1.Service) *networkingv1.IPAddress {
	family := corev1.IPv4Protocol
	if addr, err := netip.ParseAddr(ip); err == nil && addr.Is6() {
		family = corev1.IPv6Protocol
	}
	return &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name: ip,
			Labels: map[string]string{
				networkingv1.LabelIPAddressFamily: string(family),
				networkingv1.LabelManagedBy:       ManagedBy,
			},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{
			Resource: "services", Namespace: svc.Namespace, Name: svc.Name,
		}},
	}
}

func familyOf(a netip.Addr) corev1.IPFamily {
	if a.Is4() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}
