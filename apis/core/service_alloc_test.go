package core

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// memIPs and memPorts are in-memory allocators: the logic under test is
// the transaction around them (the real ones are tested on etcd in
// controlplane/allocators).
type memIPs struct{ used map[string]bool }

func (m *memIPs) Allocate(_ context.Context, _ *corev1.Service, ip net.IP, dryRun bool) error {
	if !ip.IsPrivate() {
		return errors.New("the provided network does not match the current range")
	}
	if m.used[ip.String()] {
		return errors.New("provided IP is already allocated")
	}
	if !dryRun {
		m.used[ip.String()] = true
	}
	return nil
}

func (m *memIPs) AllocateNext(_ context.Context, _ *corev1.Service, f corev1.IPFamily, dryRun bool) (net.IP, error) {
	for i := 2; i < 255; i++ {
		ip := net.IPv4(10, 0, 0, byte(i))
		if !m.used[ip.String()] {
			if !dryRun {
				m.used[ip.String()] = true
			}
			return ip, nil
		}
	}
	return nil, ErrIPRangeFull
}

func (m *memIPs) Release(_ context.Context, ip net.IP) error { delete(m.used, ip.String()); return nil }

type memPorts struct{ used map[int]bool }

func (m *memPorts) Allocate(_ context.Context, p int) error {
	if p < 30000 || p > 30010 {
		return errors.New("provided port is not in the valid range. The range of valid ports is 30000-30010")
	}
	if m.used[p] {
		return errors.New("provided port is already allocated")
	}
	m.used[p] = true
	return nil
}

func (m *memPorts) AllocateNext(ctx context.Context) (int, error) {
	for p := 30000; p <= 30010; p++ {
		if m.Allocate(ctx, p) == nil {
			return p, nil
		}
	}
	return 0, errors.New("range is full")
}

func (m *memPorts) Release(_ context.Context, p int) error     { delete(m.used, p); return nil }
func (m *memPorts) Has(_ context.Context, p int) (bool, error) { return m.used[p], nil }

func newMemAllocators() (*ServiceAllocators, *memIPs, *memPorts) {
	ips, ports := &memIPs{used: map[string]bool{}}, &memPorts{used: map[int]bool{}}
	return &ServiceAllocators{IPs: ips, Ports: ports, Families: []corev1.IPFamily{corev1.IPv4Protocol}}, ips, ports
}

func newService(edit func(s *corev1.Service)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"a": "b"}, Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}
	if edit != nil {
		edit(s)
	}
	DefaultService(s)
	normalizeClusterIPs(s, nil)
	return s
}

func TestAllocateCreate(t *testing.T) {
	ctx := context.Background()
	al, ips, ports := newMemAllocators()
	s := newService(nil)
	txn, err := al.allocateCreate(ctx, s, false)
	if err != nil {
		t.Fatal(err)
	}
	txn.commit()
	if s.Spec.ClusterIP != "10.0.0.2" || !slices.Equal(s.Spec.ClusterIPs, []string{"10.0.0.2"}) ||
		!slices.Equal(s.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) || *s.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		t.Fatalf("allocated: %+v", s.Spec)
	}

	// A taken explicit IP: kube's 422 on spec.clusterIPs.
	_, err = al.allocateCreate(ctx, newService(func(s *corev1.Service) { s.Spec.ClusterIP = "10.0.0.2" }), false)
	if !apierrors.IsInvalid(err) || err.Error() != `Service "s" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.2"]: failed to allocate IP 10.0.0.2: provided IP is already allocated` {
		t.Fatalf("duplicate IP: %v", err)
	}

	// Node ports: one per port number, shared by its protocols; a failed
	// write reverts them and the IP.
	np := newService(func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports = []corev1.ServicePort{{Name: "tcp", Port: 53}, {Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "x", Port: 80, NodePort: 30005}}
	})
	txn, err = al.allocateCreate(ctx, np, false)
	if err != nil {
		t.Fatal(err)
	}
	if np.Spec.Ports[0].NodePort != 30000 || np.Spec.Ports[1].NodePort != 30000 || np.Spec.Ports[2].NodePort != 30005 || len(ports.used) != 2 {
		t.Fatalf("node ports: %+v used %v", np.Spec.Ports, ports.used)
	}
	txn.revert()
	if len(ports.used) != 0 || len(ips.used) != 1 {
		t.Fatalf("after revert: ports %v ips %v", ports.used, ips.used)
	}
}

func TestAllocateCreateFailuresRelease(t *testing.T) {
	ctx := context.Background()
	al, ips, ports := newMemAllocators()
	ports.used[30001] = true
	_, err := al.allocateCreate(ctx, newService(func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30001
	}), false)
	if !apierrors.IsInvalid(err) || err.Error() != `Service "s" is invalid: spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated` {
		t.Fatalf("taken node port: %v", err)
	}
	if len(ips.used) != 0 {
		t.Errorf("the IP of a failed allocation stays: %v", ips.used)
	}
	_, err = al.allocateCreate(ctx, newService(func(s *corev1.Service) { s.Spec.ClusterIP = "8.8.8.8" }), false)
	if !apierrors.IsInvalid(err) {
		t.Errorf("IP outside the range: %v", err)
	}
	_, err = al.allocateCreate(ctx, newService(func(s *corev1.Service) { s.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack) }), false)
	if !apierrors.IsInvalid(err) || err.Error() != `Service "s" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services` {
		t.Errorf("dual stack on a single-stack cluster: %v", err)
	}
}

func TestAllocateCreateDryRun(t *testing.T) {
	al, ips, ports := newMemAllocators()
	s := newService(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
	txn, err := al.allocateCreate(context.Background(), s, true)
	if err != nil {
		t.Fatal(err)
	}
	txn.commit()
	if len(ips.used) != 0 || len(ports.used) != 0 || s.Spec.Ports[0].NodePort != 32769 {
		t.Errorf("dry run allocated: ips %v ports %v, node port %d", ips.used, ports.used, s.Spec.Ports[0].NodePort)
	}
}

func TestAllocateHeadlessAndExternalName(t *testing.T) {
	al, ips, _ := newMemAllocators()
	headless := newService(func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
	if _, err := al.allocateCreate(context.Background(), headless, false); err != nil {
		t.Fatal(err)
	}
	selectorless := newService(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.Selector = corev1.ClusterIPNone, nil })
	if _, err := al.allocateCreate(context.Background(), selectorless, false); err != nil {
		t.Fatal(err)
	}
	ext := newService(func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	})
	if _, err := al.allocateCreate(context.Background(), ext, false); err != nil {
		t.Fatal(err)
	}
	if len(ips.used) != 0 || *headless.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack ||
		*selectorless.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyRequireDualStack || len(selectorless.Spec.IPFamilies) != 2 ||
		ext.Spec.IPFamilyPolicy != nil || ext.Spec.IPFamilies != nil {
		t.Errorf("headless %+v\nselectorless %+v\nexternal %+v", headless.Spec, selectorless.Spec, ext.Spec)
	}
}

func TestAllocateUpdate(t *testing.T) {
	ctx := context.Background()
	al, ips, ports := newMemAllocators()
	old := newService(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort })
	txn, _ := al.allocateCreate(ctx, old, false)
	txn.commit()

	// NodePort to ClusterIP: the port is released once the write is done.
	s := old.DeepCopy()
	s.Spec.Type = corev1.ServiceTypeClusterIP
	txn, err := al.allocateUpdate(ctx, s, old, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports.used) != 1 {
		t.Fatalf("released before commit: %v", ports.used)
	}
	txn.commit()
	if len(ports.used) != 0 {
		t.Fatalf("not released on commit: %v", ports.used)
	}

	// To ExternalName: the IP goes on commit; back: a new one.
	s = old.DeepCopy()
	s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com", SessionAffinity: corev1.ServiceAffinityNone}
	txn, err = al.allocateUpdate(ctx, s, old, false)
	if err != nil {
		t.Fatal(err)
	}
	txn.commit()
	if len(ips.used) != 0 {
		t.Fatalf("IP kept: %v", ips.used)
	}
	back := newService(nil)
	txn, err = al.allocateUpdate(ctx, back, s, false)
	if err != nil || back.Spec.ClusterIP == "" || len(ips.used) != 1 {
		t.Fatalf("from ExternalName: %v %+v", err, back.Spec)
	}
	txn.revert()
	if len(ips.used) != 0 {
		t.Fatalf("not reverted: %v", ips.used)
	}
}
