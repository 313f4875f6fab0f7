package core

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	netutils "k8s.io/utils/net"
)

// defaultOnRead completes services written before clusterIPs, ipFamilies
// and ipFamilyPolicy existed, and hides the internal traffic policy older
// servers set on ExternalName services, as kube does on every read.
func (r *ServiceREST) defaultOnRead(obj runtime.Object) {
	switch o := obj.(type) {
	case *corev1.Service:
		r.defaultServiceOnRead(o)
	case *corev1.ServiceList:
		for i := range o.Items {
			r.defaultServiceOnRead(&o.Items[i])
		}
	}
}

// defaultServiceOnRead sets only svc's own fields, never what its
// slices, maps and pointers point to: the items of a listed ServiceList
// are shallow copies that share those with the watch cache's services
// (storage.CachedObjects), and a list must not change the cache.
func (r *ServiceREST) defaultServiceOnRead(svc *corev1.Service) {
	normalizeClusterIPs(svc, nil)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		svc.Spec.InternalTrafficPolicy = nil
		return
	}
	if len(svc.Spec.IPFamilies) > 0 {
		return
	}
	primary := r.alloc.Families[0]
	switch {
	case svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0:
		svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack)
		svc.Spec.IPFamilies = []corev1.IPFamily{primary, otherFamily(primary)}
	case svc.Spec.ClusterIP == corev1.ClusterIPNone:
		svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicySingleStack)
		svc.Spec.IPFamilies = []corev1.IPFamily{primary}
	default:
		// A new slice: an empty one read from storage may have room that
		// the cache's service shares.
		var families []corev1.IPFamily
		for _, ip := range svc.Spec.ClusterIPs {
			f := corev1.IPv4Protocol
			if netutils.IsIPv6String(ip) {
				f = corev1.IPv6Protocol
			}
			families = append(families, f)
		}
		if len(families) > 0 {
			svc.Spec.IPFamilies = families
		}
		switch len(svc.Spec.IPFamilies) {
		case 1:
			svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicySingleStack)
		case 2:
			svc.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack)
		}
	}
}

// normalizeClusterIPs keeps clusterIP and clusterIPs in step for clients
// that only know clusterIP: on create it fills clusterIPs from clusterIP;
// on update it restores clusterIPs a client dropped, clears them with
// clusterIP, and follows a changed clusterIP (which validation refuses).
// old is nil on create.
func normalizeClusterIPs(svc, old *corev1.Service) {
	if old == nil {
		if svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0 {
			svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
		}
		return
	}
	if len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) == 0 && old.Spec.ClusterIP == svc.Spec.ClusterIP {
		svc.Spec.ClusterIPs = old.Spec.ClusterIPs
	}
	if old.Spec.ClusterIP == svc.Spec.ClusterIP {
		return
	}
	same := slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs)
	switch {
	case old.Spec.ClusterIP != "" && svc.Spec.ClusterIP == "":
		if same {
			svc.Spec.ClusterIPs = nil
		}
	case same:
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
}

// patchAllocatedValues puts back the values the server allocated and an
// update left out (a client re-applying its original manifest): cluster
// IPs, node ports by port name when not used by another port, and the
// health check node port.
func patchAllocatedValues(svc, old *corev1.Service) {
	if needsClusterIP(old) && needsClusterIP(svc) {
		if svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(svc.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			svc.Spec.ClusterIPs = old.Spec.ClusterIPs
		}
	}
	if needsNodePort(old) && needsNodePort(svc) {
		used := nodePortSet(old).Intersection(nodePortSet(svc))
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 && !used.Has(byName[p.Name]) {
				p.NodePort = byName[p.Name]
			}
		}
	}
	if needsHealthCheck(old) && needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort == 0 {
		svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}
}
