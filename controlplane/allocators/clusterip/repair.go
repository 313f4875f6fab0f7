package clusterip

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/capstan-io/capstan/registry/rest"
)

// LeakGracePeriod is how long an IPAddress may lack its Service before it
// is released: an allocation precedes the write of its Service, as in
// kube.
const LeakGracePeriod = time.Minute

// Repair makes IPAddresses and Services agree, as kube's IP repair
// controller does: every cluster IP of a Service has its IPAddress, and an
// IPAddress whose Service is gone or no longer holds it is deleted once
// older than LeakGracePeriod.
type Repair struct {
	IPs       IPAddressStore
	Services  rest.Lister // all namespaces
	Logger    *slog.Logger
	Now       func() time.Time
	Allocator *Allocator
}

// RunOnce repairs once.
func (r *Repair) RunOnce(ctx context.Context) error {
	list, err := r.Services.List(ctx, &rest.ListOptions{LabelSelector: labels.Everything()})
	if err != nil {
		return err
	}
	services := list.(*corev1.ServiceList).Items
	byName := map[string]*corev1.Service{}
	for i := range services {
		byName[services[i].Namespace+"/"+services[i].Name] = &services[i]
	}
	ips, err := r.IPs.List(ctx, &rest.ListOptions{LabelSelector: labels.Everything()})
	if err != nil {
		return err
	}
	addrs := map[string]*networkingv1.IPAddress{}
	items := ips.(*networkingv1.IPAddressList).Items
	for i := range items {
		addrs[items[i].Name] = &items[i]
	}
	ranges, err := r.allRanges(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for i := range services {
		errs = append(errs, r.repairService(ctx, &services[i], ranges, addrs, byName))
	}
	for _, ip := range items {
		errs = append(errs, r.repairIPAddress(ctx, &ip, byName))
	}
	return errors.Join(errs...)
}

// repairService recreates the missing or misdirected IPAddresses of a
// service's cluster IPs.
func (r *Repair) repairService(ctx context.Context, svc *corev1.Service, ranges []ipRange,
	addrs map[string]*networkingv1.IPAddress, byName map[string]*corev1.Service) error {
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil
	}
	for _, s := range svc.Spec.ClusterIPs {
		addr, err := netip.ParseAddr(s)
		if err != nil {
			r.Logger.Warn("cluster IP is not a valid IP; please recreate the service", "service", key(svc), "ip", s)
			continue
		}
		name := addr.String()
		if !slices.ContainsFunc(ranges, func(x ipRange) bool { return x.contains(addr) }) {
			r.Logger.Warn("cluster IP is in no service CIDR; please recreate the service", "service", key(svc), "ip", name)
			continue
		}
		ip, ok := addrs[name]
		switch {
		case !ok:
			r.Logger.Warn("cluster IP is not allocated; repairing", "service", key(svc), "ip", name)
			if err := r.create(ctx, name, svc); err != nil {
				return err
			}
		case ip.Spec.ParentRef == nil || ip.Spec.ParentRef.Group != "" || ip.Spec.ParentRef.Resource != "services":
			if err := r.recreate(ctx, name, svc); err != nil {
				return err
			}
		case ip.Spec.ParentRef.Namespace != svc.Namespace || ip.Spec.ParentRef.Name != svc.Name:
			owner, exists := byName[ip.Spec.ParentRef.Namespace+"/"+ip.Spec.ParentRef.Name]
			if exists && holds(owner, name) {
				r.Logger.Warn("cluster IP is assigned to several services; please recreate the service",
					"service", key(svc), "ip", name, "owner", key(owner))
				continue
			}
			if err := r.recreate(ctx, name, svc); err != nil {
				return err
			}
		}
	}
	return nil
}

// repairIPAddress deletes an IPAddress of the allocator whose Service no
// longer holds it, once it is old enough not to be an allocation whose
// Service is being written.
func (r *Repair) repairIPAddress(ctx context.Context, ip *networkingv1.IPAddress, byName map[string]*corev1.Service) error {
	if ip.Labels[networkingv1.LabelManagedBy] != ManagedBy {
		return nil
	}
	ref := ip.Spec.ParentRef
	if ref != nil && ref.Group == "" && ref.Resource == "services" {
		if svc, ok := byName[ref.Namespace+"/"+ref.Name]; ok && holds(svc, ip.Name) {
			return nil
		}
		if r.Now().Sub(ip.CreationTimestamp.Time) < LeakGracePeriod {
			return nil
		}
	}
	r.Logger.Warn("IPAddress appears to have leaked: cleaning up", "ip", ip.Name)
	_, _, err := r.IPs.Delete(ctx, ip.Name, nil, &metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// allRanges are the ranges of both families.
func (r *Repair) allRanges(ctx context.Context) ([]ipRange, error) {
	v4, err := r.Allocator.ranges(ctx, corev1.IPv4Protocol)
	if err != nil {
		return nil, err
	}
	v6, err := r.Allocator.ranges(ctx, corev1.IPv6Protocol)
	return append(v4, v6...), err
}

func (r *Repair) create(ctx context.Context, name string, svc *corev1.Service) error {
	_, err := r.IPs.Create(ctx, NewIPAddress(name, svc), nil, &metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (r *Repair) recreate(ctx context.Context, name string, svc *corev1.Service) error {
	r.Logger.Warn("IPAddress has a wrong reference; repairing", "service", key(svc), "ip", name)
	if _, _, err := r.IPs.Delete(ctx, name, nil, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return r.create(ctx, name, svc)
}

func key(svc *corev1.Service) string { return svc.Namespace + "/" + svc.Name }

// holds reports whether svc has the cluster IP whose canonical form is
// name (a client may have written it otherwise).
func holds(svc *corev1.Service, name string) bool {
	return slices.ContainsFunc(svc.Spec.ClusterIPs, func(ip string) bool {
		addr, err := netip.ParseAddr(ip)
		return err == nil && addr.String() == name
	})
}
