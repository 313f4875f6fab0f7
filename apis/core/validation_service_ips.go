package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

var (
	supportedIPFamilies       = []string{string(corev1.IPv4Protocol), string(corev1.IPv6Protocol)}
	supportedIPFamilyPolicies = []string{string(corev1.IPFamilyPolicyPreferDualStack),
		string(corev1.IPFamilyPolicyRequireDualStack), string(corev1.IPFamilyPolicySingleStack)}
)

// ValidateServiceClusterIPsRelatedFields validates spec.clusterIP(s),
// spec.ipFamilies and spec.ipFamilyPolicy together, as kube does before
// allocating and again in the strategy. old is nil on create.
func ValidateServiceClusterIPsRelatedFields(svc, old *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	errs := validateClusterIPSync(svc)
	familiesPath := field.NewPath("spec", "ipFamilies")
	seen := sets.New[corev1.IPFamily]()
	for i, f := range svc.Spec.IPFamilies {
		if !sets.New(supportedIPFamilies...).Has(string(f)) {
			errs = append(errs, field.NotSupported(familiesPath.Index(i), f, supportedIPFamilies))
		}
		if seen.Has(f) {
			errs = append(errs, field.Duplicate(familiesPath.Index(i), f))
		}
		seen.Insert(f)
	}
	if p := svc.Spec.IPFamilyPolicy; p != nil && !sets.New(supportedIPFamilyPolicies...).Has(string(*p)) {
		errs = append(errs, field.NotSupported(field.NewPath("spec", "ipFamilyPolicy"), p, supportedIPFamilyPolicies))
	}
	ipErrs, invalid := validateClusterIPValues(svc, old)
	errs = append(errs, ipErrs...)
	if invalid {
		// Further checks would only repeat what is wrong with the IPs.
		return errs
	}
	return append(errs, validateClusterIPFamilies(svc)...)
}

// validateClusterIPSync: clusterIPs[0] is clusterIP, and clusterIPs is
// empty when clusterIP is.
func validateClusterIPSync(svc *corev1.Service) field.ErrorList {
	path := field.NewPath("spec", "clusterIPs")
	switch {
	case svc.Spec.ClusterIP != "" && len(svc.Spec.ClusterIPs) == 0:
		return field.ErrorList{field.Required(path, "")}
	case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIPs[0] != svc.Spec.ClusterIP:
		return field.ErrorList{field.Invalid(path, svc.Spec.ClusterIPs, "first value must match `clusterIP`")}
	case svc.Spec.ClusterIP == "" && len(svc.Spec.ClusterIPs) != 0:
		return field.ErrorList{field.Invalid(path, svc.Spec.ClusterIPs, "must be empty when `clusterIP` is not specified")}
	}
	return nil
}

// validateClusterIPValues: "None" only alone, valid IPs otherwise (old ones
// may stay), at most two. invalid reports a misplaced "None" or an invalid
// IP, after which kube checks nothing more.
func validateClusterIPValues(svc, old *corev1.Service) (errs field.ErrorList, invalid bool) {
	path := field.NewPath("spec", "clusterIPs")
	var existing []string
	if old != nil {
		existing = old.Spec.ClusterIPs
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(svc.Spec.ClusterIPs) > 1 {
				invalid = true
				errs = append(errs, field.Invalid(path, svc.Spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		e := validation.IsValidIPForLegacyField(path.Index(i), ip, true, existing)
		invalid = invalid || len(e) > 0
		errs = append(errs, e...)
	}
	if len(svc.Spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(path, svc.Spec.ClusterIPs, "may only hold up to 2 values"))
	}
	return errs, invalid
}

// validateClusterIPFamilies: two IPs are of two families, and each IP is
// of the family ipFamilies names at its index.
func validateClusterIPFamilies(svc *corev1.Service) field.ErrorList {
	path := field.NewPath("spec", "clusterIPs")
	var errs field.ErrorList
	if len(svc.Spec.ClusterIPs) > 1 {
		dual, err := netutils.IsDualStackIPStrings(svc.Spec.ClusterIPs)
		if err != nil {
			errs = append(errs, field.InternalError(path, fmt.Errorf("failed to check for dual stack with error:%v", err)))
		}
		if !dual {
			errs = append(errs, field.Invalid(path, svc.Spec.ClusterIPs, "may specify no more than one IP for each IP family"))
		}
	}
	if isHeadless(svc) {
		return errs
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if i >= len(svc.Spec.IPFamilies) {
			break
		}
		switch f := svc.Spec.IPFamilies[i]; {
		case f == corev1.IPv4Protocol && netutils.IsIPv6String(ip):
			errs = append(errs, field.Invalid(path.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
		case f == corev1.IPv6Protocol && !netutils.IsIPv6String(ip):
			errs = append(errs, field.Invalid(path.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
		}
	}
	return errs
}

// validateUpgradeDowngradeClusterIPs: cluster IPs never change; a
// secondary one may be added, or released with the SingleStack policy.
func validateUpgradeDowngradeClusterIPs(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(old) && isHeadless(svc) {
		return nil
	}
	path := field.NewPath("spec", "clusterIPs")
	oldIPs, ips := old.Spec.ClusterIPs, svc.Spec.ClusterIPs
	var errs field.ErrorList
	switch {
	case len(oldIPs) == len(ips):
		for i := range oldIPs {
			if oldIPs[i] != ips[i] {
				errs = append(errs, field.Invalid(path.Index(i), ips, "may not change once set"))
			}
		}
	case len(oldIPs) > len(ips):
		if len(ips) == 0 {
			errs = append(errs, field.Invalid(path.Index(0), ips, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(ips) > 0 && ips[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(path.Index(0), ips, "may not change once set"))
		}
		if len(ips) == 1 && !isSingleStack(svc) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy,
				"must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && ips[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(path.Index(0), ips, "may not change once set"))
		}
	}
	return errs
}

// validateUpgradeDowngradeIPFamilies is the same rule for ipFamilies;
// headless services may change families. The values kube reports in some
// of these errors are the cluster IPs; so are these.
func validateUpgradeDowngradeIPFamilies(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadless(svc) || isHeadless(old) {
		return nil
	}
	path := field.NewPath("spec", "ipFamilies").Index(0)
	oldFams, fams := old.Spec.IPFamilies, svc.Spec.IPFamilies
	var errs field.ErrorList
	switch {
	case len(oldFams) == len(fams):
		for i := range oldFams {
			if oldFams[i] != fams[i] {
				errs = append(errs, field.Invalid(path, fams, "may not change once set"))
			}
		}
	case len(oldFams) > len(fams):
		if len(svc.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(path, fams, "primary ipFamily can not be unset"))
		}
		if len(fams) > 0 && fams[0] != oldFams[0] {
			errs = append(errs, field.Invalid(path, svc.Spec.ClusterIPs, "may not change once set"))
		}
		if len(fams) == 1 && !isSingleStack(svc) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy,
				"must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(oldFams) > 0 && len(fams) > 0 && fams[0] != oldFams[0] {
			errs = append(errs, field.Invalid(path, svc.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

func isSingleStack(svc *corev1.Service) bool {
	return svc.Spec.IPFamilyPolicy != nil && *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack
}

// validateEndpointIP refuses addresses that make no sense as endpoints:
// unspecified, loopback, link-local unicast and link-local multicast.
func validateEndpointIP(value string, path *field.Path) field.ErrorList {
	ip := netutils.ParseIPSloppy(value)
	if ip == nil {
		return field.ErrorList{field.Invalid(path, value, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if ip.IsUnspecified() {
		errs = append(errs, field.Invalid(path, value, fmt.Sprintf("may not be unspecified (%v)", value)))
	}
	if ip.IsLoopback() {
		errs = append(errs, field.Invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(path, value, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(path, value, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

func isIP(s string) bool { return netutils.ParseIPSloppy(s) != nil }

func ipWarnings(path *field.Path, ip string) []string { return validation.GetWarningsForIP(path, ip) }

// serviceWarnings are kube's warnings on a service: deprecated annotations
// and fields, non-canonical IPs and CIDRs, fields its type ignores.
func serviceWarnings(svc *corev1.Service) []string {
	var w []string
	spec := field.NewPath("spec")
	if _, ok := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]; ok {
		w = append(w, fmt.Sprintf("annotation %s is deprecated, please use %s instead",
			corev1.DeprecatedAnnotationTopologyAwareHints, corev1.AnnotationTopologyMode))
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.ClusterIP != "" {
		for i, ip := range svc.Spec.ClusterIPs {
			w = append(w, ipWarnings(spec.Child("clusterIPs").Index(i), ip)...)
		}
	}
	headless := svc.Spec.Type == corev1.ServiceTypeClusterIP && svc.Spec.ClusterIP == corev1.ClusterIPNone
	if headless {
		if svc.Spec.LoadBalancerIP != "" {
			w = append(w, "spec.loadBalancerIP is ignored for headless services")
		}
		if len(svc.Spec.ExternalIPs) > 0 {
			w = append(w, "spec.externalIPs is ignored for headless services")
		}
		if svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
			w = append(w, "spec.SessionAffinity is ignored for headless services")
		}
	}
	for i, ip := range svc.Spec.ExternalIPs {
		w = append(w, ipWarnings(spec.Child("externalIPs").Index(i), ip)...)
	}
	if len(svc.Spec.ExternalIPs) > 0 && !headless && svc.Spec.Type != corev1.ServiceTypeExternalName {
		w = append(w, "spec.externalIPs is deprecated and may no longer be implemented in some clusters")
	}
	if svc.Spec.LoadBalancerIP != "" {
		w = append(w, ipWarnings(spec.Child("loadBalancerIP"), svc.Spec.LoadBalancerIP)...)
	}
	for i, cidr := range svc.Spec.LoadBalancerSourceRanges {
		w = append(w, validation.GetWarningsForCIDR(spec.Child("loadBalancerSourceRanges").Index(i), cidr)...)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName && len(svc.Spec.ExternalIPs) > 0 {
		w = append(w, fmt.Sprintf("spec.externalIPs is ignored when spec.type is %q", corev1.ServiceTypeExternalName))
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ExternalName != "" {
		w = append(w, fmt.Sprintf("spec.externalName is ignored when spec.type is not %q", corev1.ServiceTypeExternalName))
	}
	if td := svc.Spec.TrafficDistribution; td != nil && *td == corev1.ServiceTrafficDistributionPreferClose {
		w = append(w, fmt.Sprintf("spec.trafficDistribution: %q is deprecated; use %q",
			corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone))
	}
	return w
}
