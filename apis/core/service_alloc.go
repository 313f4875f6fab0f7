package core

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// ClusterIPAllocator hands out the cluster IPs of services. Dry runs
// allocate nothing: they only check what they can without writing.
type ClusterIPAllocator interface {
	// Allocate reserves ip for svc. An error says why it cannot be had
	// (already allocated, not in a service CIDR).
	Allocate(ctx context.Context, svc *corev1.Service, ip net.IP, dryRun bool) error
	// AllocateNext reserves a free IP of family for svc; ErrIPRangeFull
	// when there is none.
	AllocateNext(ctx context.Context, svc *corev1.Service, family corev1.IPFamily, dryRun bool) (net.IP, error)
	// Release frees ip; releasing a free IP is no error.
	Release(ctx context.Context, ip net.IP) error
}

// NodePortAllocator hands out node ports.
type NodePortAllocator interface {
	Allocate(ctx context.Context, port int) error
	AllocateNext(ctx context.Context) (int, error)
	Release(ctx context.Context, port int) error
	Has(ctx context.Context, port int) (bool, error)
}

// ErrIPRangeFull is returned by AllocateNext when no IP is left.
var ErrIPRangeFull = errors.New("range is full")

var serviceKind = schema.GroupKind{Kind: "Service"}

// ServiceAllocators is what ServiceREST allocates from.
type ServiceAllocators struct {
	IPs   ClusterIPAllocator
	Ports NodePortAllocator
	// Families are the IP families of --service-cluster-ip-range, the
	// default one first.
	Families []corev1.IPFamily
}

func (al *ServiceAllocators) hasFamily(f corev1.IPFamily) bool {
	return slices.Contains(al.Families, f)
}

// allocateCreate fills a new service's IP family fields and allocates its
// cluster IPs and node ports. The transaction is reverted on error.
func (al *ServiceAllocators) allocateCreate(ctx context.Context, svc *corev1.Service, dryRun bool) (*allocTxn, error) {
	t := &allocTxn{}
	if err := al.initIPFamilyFields(svc, nil); err != nil {
		return nil, err
	}
	allocated, err := al.allocClusterIPs(ctx, svc, dryRun)
	t.onRevert(func() { al.releaseIPs(ctx, allocated, dryRun) })
	if err != nil {
		t.revert()
		return nil, err
	}
	op := newPortOp(ctx, al.Ports, dryRun)
	t.add(op)
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		err = initNodePorts(ctx, svc, op)
	}
	if err == nil && needsHealthCheck(svc) {
		err = allocHealthCheckNodePort(ctx, svc, op)
	}
	if err != nil {
		t.revert()
		return nil, err
	}
	return t, nil
}

// initIPFamilyFields defaults ipFamilyPolicy and ipFamilies from the
// cluster IPs and the configured families, and refuses what the cluster
// cannot serve. old is nil on create.
func (al *ServiceAllocators) initIPFamilyFields(svc, old *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || matchingPreferDualStack(svc, old) {
		return nil
	}
	if svc.Spec.IPFamilyPolicy == nil {
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			svc.Spec.IPFamilyPolicy = old.Spec.IPFamilyPolicy
		case svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0:
			svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack)
		default:
			svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicySingleStack)
		}
	}
	if errs := ValidateServiceClusterIPsRelatedFields(svc, old); len(errs) > 0 {
		return apierrors.NewInvalid(serviceKind, svc.Name, errs)
	}
	errs := al.checkPolicy(svc, old)
	if len(errs) > 0 {
		return apierrors.NewInvalid(serviceKind, svc.Name, errs)
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0 {
		al.defaultSelectorlessHeadless(svc)
		return nil
	}
	if *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicyRequireDualStack && len(al.Families) < 2 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy,
			"this cluster is not configured for dual-stack services"))
	}
	for i, f := range svc.Spec.IPFamilies {
		if !al.hasFamily(f) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(serviceKind, svc.Name, errs)
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{al.Families[0]}
	}
	if *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack && len(svc.Spec.IPFamilies) == 1 && len(al.Families) == 2 {
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, otherFamily(svc.Spec.IPFamilies[0]))
	}
	return nil
}

// checkPolicy trims or refuses the secondary IP and family on updates to
// SingleStack, checks the policy against the number of IPs and families,
// and infers missing families from the cluster IPs.
func (al *ServiceAllocators) checkPolicy(svc, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	policyPath := field.NewPath("spec", "ipFamilyPolicy")
	single := *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack
	if old != nil {
		switch {
		case single:
			if slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && len(svc.Spec.ClusterIPs) > 1 {
				svc.Spec.ClusterIPs = svc.Spec.ClusterIPs[:1]
			}
			if slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies) && len(svc.Spec.IPFamilies) > 1 {
				svc.Spec.IPFamilies = svc.Spec.IPFamilies[:1]
			}
		default:
			if len(svc.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) < len(old.Spec.ClusterIPs) {
				errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary cluster IP"))
			}
			if len(svc.Spec.IPFamilies) > 0 && len(svc.Spec.IPFamilies) < len(old.Spec.IPFamilies) {
				errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary IP family"))
			}
		}
	}
	if single && len(svc.Spec.ClusterIPs) == 2 {
		errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
	}
	if single && len(svc.Spec.IPFamilies) == 2 {
		errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i < len(svc.Spec.IPFamilies) {
			continue
		}
		f := familyOf(ip)
		if !al.hasFamily(f) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), svc.Spec.ClusterIPs,
				fmt.Sprintf("%s is not configured on this cluster", f)))
		} else {
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, f)
		}
	}
	return errs
}

// defaultSelectorlessHeadless: a headless service without a selector may
// name any families; it defaults to the cluster's, both unless SingleStack.
func (al *ServiceAllocators) defaultSelectorlessHeadless(svc *corev1.Service) {
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{al.Families[0]}
	}
	if len(svc.Spec.IPFamilies) < 2 && *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, otherFamily(svc.Spec.IPFamilies[0]))
	}
}

// allocClusterIPs allocates one IP per family of a service that has cluster
// IPs, the requested ones or free ones, and fills clusterIP(s).
func (al *ServiceAllocators) allocClusterIPs(ctx context.Context, svc *corev1.Service, dryRun bool) (map[corev1.IPFamily]string, error) {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || isHeadless(svc) {
		return nil, nil
	}
	if svc.Spec.ClusterIPs == nil {
		svc.Spec.ClusterIPs = make([]string, 0, len(svc.Spec.IPFamilies))
	}
	want := map[corev1.IPFamily]string{}
	for i, f := range svc.Spec.IPFamilies {
		if i >= len(svc.Spec.ClusterIPs) {
			svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, "")
		}
		want[f] = svc.Spec.ClusterIPs[i]
	}
	allocated, err := al.allocIPs(ctx, svc, want, dryRun)
	if err != nil {
		return allocated, err
	}
	for i, f := range svc.Spec.IPFamilies {
		if ip, ok := allocated[f]; ok {
			svc.Spec.ClusterIPs[i] = ip
			if i == 0 {
				svc.Spec.ClusterIP = ip
			}
		}
	}
	return allocated, nil
}

// allocIPs allocates the IP of each family: a free one where none is given.
// It returns what it allocated, also on error, for the caller to release.
func (al *ServiceAllocators) allocIPs(ctx context.Context, svc *corev1.Service, want map[corev1.IPFamily]string, dryRun bool) (map[corev1.IPFamily]string, error) {
	allocated := map[corev1.IPFamily]string{}
	for _, f := range al.Families {
		ip, ok := want[f]
		if !ok {
			continue
		}
		if ip == "" {
			got, err := al.IPs.AllocateNext(ctx, svc, f, dryRun)
			if errors.Is(err, ErrIPRangeFull) {
				return allocated, apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: %w", svc.Name, err))
			}
			if err != nil {
				return allocated, apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{field.Invalid(
					field.NewPath("spec", "clusterIPs"), svc.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP: %v", err))})
			}
			allocated[f] = got.String()
			continue
		}
		parsed := netutils.ParseIPSloppy(ip)
		if parsed == nil {
			return allocated, apierrors.NewInternalError(fmt.Errorf("failed to parse service IP %q", ip))
		}
		if err := al.IPs.Allocate(ctx, svc, parsed, dryRun); err != nil {
			return allocated, apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{field.Invalid(
				field.NewPath("spec", "clusterIPs"), svc.Spec.ClusterIPs, fmt.Sprintf("failed to allocate IP %v: %v", ip, err))})
		}
		allocated[f] = ip
	}
	return allocated, nil
}

// releaseIPs frees IPs; failures are left to the repair loop.
func (al *ServiceAllocators) releaseIPs(ctx context.Context, ips map[corev1.IPFamily]string, dryRun bool) {
	if dryRun {
		return
	}
	for f, ip := range ips {
		parsed := netutils.ParseIPSloppy(ip)
		if parsed == nil || !al.hasFamily(f) {
			continue
		}
		_ = al.IPs.Release(context.WithoutCancel(ctx), parsed)
	}
}

// releaseAll frees everything a deleted service held.
func (al *ServiceAllocators) releaseAll(ctx context.Context, svc *corev1.Service) {
	ctx = context.WithoutCancel(ctx)
	if needsClusterIP(svc) && !isHeadless(svc) {
		ips := map[corev1.IPFamily]string{}
		for _, ip := range svc.Spec.ClusterIPs {
			ips[familyOf(ip)] = ip
		}
		al.releaseIPs(ctx, ips, false)
	}
	for _, p := range nodePortsOf(svc) {
		_ = al.Ports.Release(ctx, p)
	}
	if needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort > 0 {
		_ = al.Ports.Release(ctx, int(svc.Spec.HealthCheckNodePort))
	}
}

// matchingPreferDualStack: an update of a PreferDualStack service that
// keeps its type, IPs and families leaves them alone, even if the
// cluster's families changed since.
func matchingPreferDualStack(svc, old *corev1.Service) bool {
	if old == nil || svc.Spec.IPFamilyPolicy == nil || old.Spec.Type != svc.Spec.Type {
		return false
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		return false
	}
	prefer := corev1.IPFamilyPolicyPreferDualStack
	if *svc.Spec.IPFamilyPolicy != prefer || (old.Spec.IPFamilyPolicy != nil && *old.Spec.IPFamilyPolicy != prefer) {
		return false
	}
	return slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies)
}

func familyOf(ip string) corev1.IPFamily {
	switch {
	case netutils.IsIPv4String(ip):
		return corev1.IPv4Protocol
	case netutils.IsIPv6String(ip):
		return corev1.IPv6Protocol
	}
	return "unknown"
}

func otherFamily(f corev1.IPFamily) corev1.IPFamily {
	if f == corev1.IPv4Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}
