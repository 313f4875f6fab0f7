package clusterip

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/apis/networking"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
)

func TestRange(t *testing.T) {
	cases := []struct {
		cidr        string
		ok          bool
		first, last string
		size, lower uint64
	}{
		{"10.0.0.0/24", true, "10.0.0.1", "10.0.0.254", 254, 16},
		{"10.0.0.0/28", true, "10.0.0.1", "10.0.0.14", 14, 0},
		{"10.0.0.0/16", true, "10.0.0.1", "10.0.255.254", 65534, 256},
		{"10.0.0.0/30", true, "10.0.0.1", "10.0.0.2", 2, 0},
		{"10.0.0.0/31", false, "", "", 0, 0},
		{"10.0.0.0/32", false, "", "", 0, 0},
		{"fd00::/120", true, "fd00::1", "fd00::ff", 255, 16},
		{"fd00::/64", true, "fd00::1", "fd00::ffff:ffff:ffff:ffff", math.MaxUint64, 256},
		{"fd00::/63", false, "", "", 0, 0},
	}
	for _, c := range cases {
		r, ok := newRange(netip.MustParsePrefix(c.cidr))
		if ok != c.ok {
			t.Errorf("%s: ok = %v", c.cidr, ok)
			continue
		}
		if ok && (r.first.String() != c.first || r.last.String() != c.last || r.size != c.size || r.lower != c.lower) {
			t.Errorf("%s: %s-%s size %d lower %d", c.cidr, r.first, r.last, r.size, r.lower)
		}
	}
	r, _ := newRange(netip.MustParsePrefix("10.0.0.0/24"))
	if got := r.at(253); got.String() != "10.0.0.254" || r.contains(netip.MustParseAddr("10.0.0.255")) || r.contains(netip.MustParseAddr("fd00::1")) {
		t.Errorf("at(253) = %s", got)
	}
	if got := addOffset(netip.MustParseAddr("fd00::ffff:ffff:ffff:ffff"), 1); got.String() != "fd00:0:0:1::" {
		t.Errorf("carry: %s", got)
	}
}

func svc(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func TestAllocator(t *testing.T) {
	ctx := context.Background()
	s := newStores(t)
	s.addCIDR(t, DefaultServiceCIDRName, "10.0.0.0/28")
	a := New(s.ips, s.cidrs, net.ParseIP("10.0.0.1"))

	seen := map[string]bool{}
	for i := range 13 { // 14 addresses, one reserved
		ip, err := a.AllocateNext(ctx, svc("s"), corev1.IPv4Protocol, false)
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[ip.String()] || ip.String() == "10.0.0.1" {
			t.Fatalf("allocation %d: %s again or reserved", i, ip)
		}
		seen[ip.String()] = true
	}
	if _, err := a.AllocateNext(ctx, svc("s"), corev1.IPv4Protocol, false); !errors.Is(err, core.ErrIPRangeFull) {
		t.Fatalf("full range: %v", err)
	}
	if err := a.Allocate(ctx, svc("k"), net.ParseIP("10.0.0.1"), false); err != nil {
		t.Fatalf("the reserved address by request: %v", err)
	}
	if err := a.Allocate(ctx, svc("x"), net.ParseIP("10.0.0.5"), false); !errors.Is(err, ErrAllocated) || err.Error() != "provided IP is already allocated" {
		t.Fatalf("taken: %v", err)
	}
	for _, ip := range []string{"10.0.0.0", "10.0.0.15", "10.1.0.1", "fd00::1"} {
		if err := a.Allocate(ctx, svc("x"), net.ParseIP(ip), true); !errors.Is(err, ErrMismatchedNetwork) {
			t.Errorf("%s: %v", ip, err)
		}
	}
	if err := a.Release(ctx, net.ParseIP("10.0.0.5")); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, net.ParseIP("10.0.0.5")); err != nil {
		t.Fatalf("releasing twice: %v", err)
	}
	if ip, err := a.AllocateNext(ctx, svc("y"), corev1.IPv4Protocol, false); err != nil || ip.String() != "10.0.0.5" {
		t.Fatalf("after release: %v %v", ip, err)
	}
	obj, err := s.ips.Get(ctx, "10.0.0.5", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*networkingv1.IPAddress)
	if ref := got.Spec.ParentRef; ref.Resource != "services" || ref.Namespace != "default" || ref.Name != "y" ||
		got.Labels[networkingv1.LabelManagedBy] != ManagedBy || got.Labels[networkingv1.LabelIPAddressFamily] != "IPv4" {
		t.Errorf("IPAddress: %+v", got)
	}
}

func TestAllocatorBandsAndDryRun(t *testing.T) {
	ctx := context.Background()
	s := newStores(t)
	s.addCIDR(t, DefaultServiceCIDRName, "10.0.0.0/24")
	a := New(s.ips, s.cidrs, net.ParseIP("10.0.0.1"))
	for range 20 {
		ip, err := a.AllocateNext(ctx, svc("s"), corev1.IPv4Protocol, false)
		if err != nil || ip.To4()[3] <= 16 {
			t.Fatalf("dynamic allocations come from the upper band: %v %v", ip, err)
		}
	}
	ip, err := a.AllocateNext(ctx, svc("s"), corev1.IPv4Protocol, true)
	if err != nil || ip.String() != "10.0.0.0" {
		t.Errorf("dry run: %v %v", ip, err)
	}
	if err := a.Allocate(ctx, svc("s"), net.ParseIP("10.0.0.2"), true); err != nil {
		t.Errorf("dry run of a free address: %v", err)
	}
	list, _ := s.ips.List(ctx, &rest.ListOptions{})
	if n := len(list.(*networkingv1.IPAddressList).Items); n != 20 {
		t.Errorf("%d IPAddresses, want 20: dry runs write nothing", n)
	}
	if _, err := a.AllocateNext(ctx, svc("s"), corev1.IPv6Protocol, false); !errors.Is(err, core.ErrIPRangeFull) {
		t.Errorf("a family without CIDR: %v", err)
	}
}

func TestAllocatorSkipsCIDRsNotReady(t *testing.T) {
	ctx := context.Background()
	s := newStores(t)
	s.addCIDR(t, "extra", "10.2.0.0/24")
	obj, _ := s.cidrs.Get(ctx, "extra", &metav1.GetOptions{})
	c := obj.(*networkingv1.ServiceCIDR)
	c.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionFalse,
		Reason: "Terminating", LastTransitionTime: metav1.Now()}}
	status := s.cidrs.Subresource(networking.ServiceCIDRStatusStrategy{})
	if _, _, err := status.Update(ctx, "extra", rest.UpdatedObjectFunc(func(context.Context, runtime.Object) (runtime.Object, error) { return c, nil }),
		nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := New(s.ips, s.cidrs)
	if err := a.Allocate(ctx, svc("s"), net.ParseIP("10.2.0.5"), false); !errors.Is(err, ErrMismatchedNetwork) {
		t.Errorf("allocation in a CIDR not ready: %v", err)
	}
}

func TestRepair(t *testing.T) {
	ctx := context.Background()
	s := newStores(t)
	s.addCIDR(t, DefaultServiceCIDRName, "10.0.0.0/24")
	a := New(s.ips, s.cidrs)
	withIP := svc("with-ip")
	withIP.Spec = corev1.ServiceSpec{ClusterIP: "10.0.0.20", ClusterIPs: []string{"10.0.0.20"}, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		IPFamilyPolicy: ptr(corev1.IPFamilyPolicySingleStack), Ports: []corev1.ServicePort{{Port: 80}}}
	core.DefaultService(withIP)
	if _, err := s.services.Create(request.WithNamespace(ctx, "default"), withIP, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// An allocation whose service never came.
	if err := a.Allocate(ctx, svc("gone"), net.ParseIP("10.0.0.30"), false); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r := &Repair{IPs: s.ips, Services: s.services, Allocator: a, Logger: discard(), Now: func() time.Time { return now }}
	if err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ips.Get(ctx, "10.0.0.20", &metav1.GetOptions{}); err != nil {
		t.Errorf("missing IPAddress not repaired: %v", err)
	}
	if _, err := s.ips.Get(ctx, "10.0.0.30", &metav1.GetOptions{}); err != nil {
		t.Errorf("a young allocation is kept: %v", err)
	}
	now = now.Add(LeakGracePeriod + time.Second)
	if err := r.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ips.Get(ctx, "10.0.0.30", &metav1.GetOptions{}); err == nil {
		t.Error("a leaked IPAddress is released after the grace period")
	}
	if _, err := s.ips.Get(ctx, "10.0.0.20", &metav1.GetOptions{}); err != nil {
		t.Errorf("a used IPAddress is kept: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
