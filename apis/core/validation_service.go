package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxClientIPAffinitySeconds bounds sessionAffinityConfig.clientIP.timeoutSeconds.
const maxClientIPAffinitySeconds = 86400

var (
	supportedSessionAffinities = []string{string(corev1.ServiceAffinityClientIP), string(corev1.ServiceAffinityNone)}
	supportedServiceTypes      = []string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeExternalName),
		string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeNodePort)}
	supportedTrafficPolicies     = []string{string(corev1.ServiceExternalTrafficPolicyCluster), string(corev1.ServiceExternalTrafficPolicyLocal)}
	supportedTrafficDistribution = []string{corev1.ServiceTrafficDistributionPreferClose,
		corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}
	supportedLoadBalancerIPModes = []string{string(corev1.LoadBalancerIPModeProxy), string(corev1.LoadBalancerIPModeVIP)}
)

// ValidateServiceUpdate validates an update: the primary cluster IP and IP
// family never change (but for ExternalName), nor the load balancer class
// or health check node port of a load balancer; then the new service as a
// whole.
func ValidateServiceUpdate(svc, old *corev1.Service) field.ErrorList {
	errs := validateUpgradeDowngradeClusterIPs(old, svc)
	errs = append(errs, validateUpgradeDowngradeIPFamilies(old, svc)...)
	errs = append(errs, validateLoadBalancerClass(old, svc)...)
	if needsHealthCheck(old) && needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), "field is immutable"))
	}
	return append(errs, validateService(svc, old)...)
}

// validateService validates a service's annotations and spec; old is nil
// on create. The rules, paths and messages are kube's.
func validateService(svc, old *corev1.Service) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateServiceTopologyAnnotations(svc)
	errs = append(errs, validateServiceTypeFields(svc)...)
	errs = append(errs, validateServicePorts(svc)...)
	if svc.Spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabels(svc.Spec.Selector, specPath.Child("selector"))...)
	}
	errs = append(errs, validateSessionAffinity(&svc.Spec, specPath)...)
	errs = append(errs, ValidateServiceClusterIPsRelatedFields(svc, old)...)
	errs = append(errs, validateExternalIPs(svc, old)...)
	switch {
	case svc.Spec.Type == "":
		errs = append(errs, field.Required(specPath.Child("type"), ""))
	case !sets.New(supportedServiceTypes...).Has(string(svc.Spec.Type)):
		errs = append(errs, field.NotSupported(specPath.Child("type"), svc.Spec.Type, supportedServiceTypes))
	}
	errs = append(errs, validateNodePortsAndDuplicates(svc)...)
	errs = append(errs, validateSourceRanges(svc, old)...)
	if svc.Spec.AllocateLoadBalancerNodePorts != nil && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.AllocateLoadBalancerNodePorts == nil {
		// kube reports this one without the "spec." prefix.
		errs = append(errs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), ""))
	}
	errs = append(errs, validateLoadBalancerClass(nil, svc)...)
	errs = append(errs, validateExternalTrafficPolicy(svc)...)
	errs = append(errs, validateInternalTrafficPolicy(svc)...)
	if td := svc.Spec.TrafficDistribution; td != nil && !sets.New(supportedTrafficDistribution...).Has(*td) {
		errs = append(errs, field.NotSupported(specPath.Child("trafficDistribution"), *td, supportedTrafficDistribution))
	}
	return errs
}

func validateServiceTopologyAnnotations(svc *corev1.Service) field.ErrorList {
	hints, hintsSet := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	mode, modeSet := svc.Annotations[corev1.AnnotationTopologyMode]
	if hintsSet && modeSet && hints != mode {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations").Key(corev1.AnnotationTopologyMode), mode,
			fmt.Sprintf("must match annotations[%s] when both are specified", corev1.DeprecatedAnnotationTopologyAwareHints))}
	}
	return nil
}

// validateServiceTypeFields: ports are required but for headless and
// ExternalName services; node ports and load balancers cannot be headless;
// an ExternalName service has a DNS name and no cluster IPs or families.
func validateServiceTypeFields(svc *corev1.Service) field.ErrorList {
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	if len(svc.Spec.Ports) == 0 && !isHeadless(svc) && svc.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if isHeadless(svc) {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), svc.Spec.ClusterIPs[0],
				fmt.Sprintf("may not be set to 'None' for %s services", svc.Spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		if len(svc.Spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(svc.Spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if svc.Spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// A trailing dot marks the name fully qualified.
		if cname := strings.TrimSuffix(svc.Spec.ExternalName, "."); cname != "" {
			errs = append(errs, validateDNSSubdomain(cname, specPath.Child("externalName"))...)
		} else {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		}
	}
	return errs
}

// validateServicePorts checks each port: a unique DNS label name (required
// when there are several), the port number, the protocol, the target port
// and the application protocol.
func validateServicePorts(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	requireName := len(svc.Spec.Ports) > 1
	for i, p := range svc.Spec.Ports {
		path := field.NewPath("spec", "ports").Index(i)
		switch {
		case requireName && p.Name == "":
			errs = append(errs, field.Required(path.Child("name"), ""))
		case p.Name != "":
			errs = append(errs, validateDNSLabel(p.Name, path.Child("name"))...)
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		errs = append(errs, validatePortNum(int(p.Port), path.Child("port"))...)
		errs = append(errs, validateProtocol(p.Protocol, path.Child("protocol"))...)
		errs = append(errs, validatePortNumOrName(p.TargetPort, path.Child("targetPort"))...)
		if p.AppProtocol != nil {
			errs = append(errs, validateQualifiedName(*p.AppProtocol, path.Child("appProtocol"))...)
		}
	}
	return errs
}

func validateProtocol(p corev1.Protocol, path *field.Path) field.ErrorList {
	switch {
	case p == "":
		return field.ErrorList{field.Required(path, "")}
	case !sets.New(supportedPortProtocols...).Has(string(p)):
		return field.ErrorList{field.NotSupported(path, p, supportedPortProtocols)}
	}
	return nil
}

func validateSessionAffinity(spec *corev1.ServiceSpec, specPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case spec.SessionAffinity == "":
		errs = append(errs, field.Required(specPath.Child("sessionAffinity"), ""))
	case !sets.New(supportedSessionAffinities...).Has(string(spec.SessionAffinity)):
		errs = append(errs, field.NotSupported(specPath.Child("sessionAffinity"), spec.SessionAffinity, supportedSessionAffinities))
	}
	path := specPath.Child("sessionAffinityConfig")
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		when := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
		c := spec.SessionAffinityConfig
		switch {
		case c == nil:
			errs = append(errs, field.Required(path, when))
		case c.ClientIP == nil:
			errs = append(errs, field.Required(path.Child("clientIP"), when))
		case c.ClientIP.TimeoutSeconds == nil:
			errs = append(errs, field.Required(path.Child("clientIP", "timeoutSeconds"), when))
		case *c.ClientIP.TimeoutSeconds <= 0 || *c.ClientIP.TimeoutSeconds > maxClientIPAffinitySeconds:
			errs = append(errs, field.Invalid(path.Child("clientIP", "timeoutSeconds"), c.ClientIP.TimeoutSeconds,
				fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPAffinitySeconds)))
		}
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	}
	return errs
}

// validateExternalIPs: new external IPs must be valid and usable as
// endpoints; those the old service had may stay.
func validateExternalIPs(svc, old *corev1.Service) field.ErrorList {
	var existing []string
	if old != nil {
		existing = old.Spec.ExternalIPs
	}
	var errs field.ErrorList
	for i, ip := range svc.Spec.ExternalIPs {
		path := field.NewPath("spec", "externalIPs").Index(i)
		if e := validation.IsValidIPForLegacyField(path, ip, true, existing); len(e) > 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, validateEndpointIP(ip, path)...)
		}
	}
	return errs
}

// validateNodePortsAndDuplicates: no node port on a ClusterIP service, and
// no (protocol, nodePort) or (protocol, port) pair twice.
func validateNodePortsAndDuplicates(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	portsPath := field.NewPath("spec", "ports")
	if svc.Spec.Type == corev1.ServiceTypeClusterIP {
		for i, p := range svc.Spec.Ports {
			if p.NodePort != 0 {
				errs = append(errs, field.Forbidden(portsPath.Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	nodePorts := map[corev1.ServicePort]bool{}
	for i, p := range svc.Spec.Ports {
		if p.NodePort == 0 {
			continue
		}
		key := corev1.ServicePort{Protocol: p.Protocol, NodePort: p.NodePort}
		if nodePorts[key] {
			errs = append(errs, field.Duplicate(portsPath.Index(i).Child("nodePort"), p.NodePort))
		}
		nodePorts[key] = true
	}
	ports := map[corev1.ServicePort]bool{}
	for i, p := range svc.Spec.Ports {
		key := corev1.ServicePort{Protocol: p.Protocol, Port: p.Port}
		if ports[key] {
			errs = append(errs, field.Duplicate(portsPath.Index(i), key))
		}
		ports[key] = true
	}
	return errs
}

// validateSourceRanges checks spec.loadBalancerSourceRanges (space-padded
// values allowed, old invalid ones kept), or else the legacy annotation.
func validateSourceRanges(svc, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	isLB := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if len(svc.Spec.LoadBalancerSourceRanges) > 0 {
		// kube spells this path with a capital L.
		path := field.NewPath("spec", "LoadBalancerSourceRanges")
		if !isLB {
			errs = append(errs, field.Forbidden(path, "may only be used when `type` is 'LoadBalancer'"))
		}
		var existing []string
		if old != nil {
			for _, v := range old.Spec.LoadBalancerSourceRanges {
				existing = append(existing, strings.TrimSpace(v))
			}
		}
		for i, v := range svc.Spec.LoadBalancerSourceRanges {
			errs = append(errs, validation.IsValidCIDRForLegacyField(path.Index(i), strings.TrimSpace(v), true, existing)...)
		}
		return errs
	}
	val, ok := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]
	if !ok {
		return nil
	}
	path := field.NewPath("metadata", "annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
	if !isLB {
		errs = append(errs, field.Forbidden(path, "may only be used when `type` is 'LoadBalancer'"))
	}
	if old != nil && old.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey] == val {
		return errs
	}
	if val = strings.TrimSpace(val); val != "" {
		for _, v := range strings.Split(val, ",") {
			errs = append(errs, validation.IsValidCIDRForLegacyField(path, strings.TrimSpace(v), true, nil)...)
		}
	}
	return errs
}

// validateLoadBalancerClass: a qualified name, only on load balancers, and
// fixed once a load balancer has one (old is nil on create).
func validateLoadBalancerClass(old, svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "loadBalancerClass")
	isLB := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if old != nil && old.Spec.Type == corev1.ServiceTypeLoadBalancer && isLB && !sameStringPtr(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
		errs = append(errs, field.Invalid(path, svc.Spec.LoadBalancerClass, "may not change once set"))
	}
	switch {
	case isLB && svc.Spec.LoadBalancerClass != nil:
		errs = append(errs, validateQualifiedName(*svc.Spec.LoadBalancerClass, path)...)
	case !isLB && svc.Spec.LoadBalancerClass != nil:
		errs = append(errs, field.Forbidden(path, "may only be used when `type` is 'LoadBalancer'"))
	}
	return errs
}

func sameStringPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// validateExternalTrafficPolicy: the policy exactly for externally
// accessible services, the health check node port exactly for load
// balancers with the Local policy.
func validateExternalTrafficPolicy(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	etp := svc.Spec.ExternalTrafficPolicy
	switch {
	case !externallyAccessible(svc) && etp != "":
		errs = append(errs, field.Invalid(specPath.Child("externalTrafficPolicy"), etp, "may only be set for externally-accessible services"))
	case externallyAccessible(svc) && etp == "":
		errs = append(errs, field.Required(specPath.Child("externalTrafficPolicy"), ""))
	case externallyAccessible(svc) && !sets.New(supportedTrafficPolicies...).Has(string(etp)):
		errs = append(errs, field.NotSupported(specPath.Child("externalTrafficPolicy"), etp, supportedTrafficPolicies))
	}
	hc := svc.Spec.HealthCheckNodePort
	path := specPath.Child("healthCheckNodePort")
	switch {
	case !needsHealthCheck(svc) && hc != 0:
		errs = append(errs, field.Invalid(path, hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
	case needsHealthCheck(svc) && hc == 0:
		errs = append(errs, field.Required(path, ""))
	case needsHealthCheck(svc):
		for _, msg := range validation.IsValidPortNum(int(hc)) {
			errs = append(errs, field.Invalid(path, hc, msg))
		}
	}
	return errs
}

// validateInternalTrafficPolicy: required but for ExternalName services,
// for which kube tolerates it.
func validateInternalTrafficPolicy(svc *corev1.Service) field.ErrorList {
	path := field.NewPath("spec", "internalTrafficPolicy")
	itp := svc.Spec.InternalTrafficPolicy
	if itp == nil {
		switch svc.Spec.Type {
		case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
			return field.ErrorList{field.Required(path, "")}
		}
		return nil
	}
	supported := []string{string(corev1.ServiceInternalTrafficPolicyCluster), string(corev1.ServiceInternalTrafficPolicyLocal)}
	if !sets.New(supported...).Has(string(*itp)) {
		return field.ErrorList{field.NotSupported(path, *itp, supported)}
	}
	return nil
}

// validateLoadBalancerStatus checks status.loadBalancer.ingress: only on
// load balancers; valid IPs with an IP mode; DNS host names.
func validateLoadBalancerStatus(status, old *corev1.LoadBalancerStatus, path *field.Path, spec *corev1.ServiceSpec) field.ErrorList {
	ingPath := path.Child("ingress")
	if spec.Type != corev1.ServiceTypeLoadBalancer && len(status.Ingress) != 0 {
		return field.ErrorList{field.Forbidden(ingPath, "may only be used when `spec.type` is 'LoadBalancer'")}
	}
	var existing []string
	if old != nil {
		for _, ing := range old.Ingress {
			if ing.IP != "" {
				existing = append(existing, ing.IP)
			}
		}
	}
	var errs field.ErrorList
	for i, ing := range status.Ingress {
		p := ingPath.Index(i)
		if ing.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(p.Child("ip"), ing.IP, true, existing)...)
		}
		switch {
		case ing.IPMode == nil && ing.IP != "":
			errs = append(errs, field.Required(p.Child("ipMode"), "must be specified when `ip` is set"))
		case ing.IPMode != nil && ing.IP == "":
			errs = append(errs, field.Forbidden(p.Child("ipMode"), "may not be specified when `ip` is not set"))
		case ing.IPMode != nil && !sets.New(supportedLoadBalancerIPModes...).Has(string(*ing.IPMode)):
			errs = append(errs, field.NotSupported(p.Child("ipMode"), ing.IPMode, supportedLoadBalancerIPModes))
		}
		if ing.Hostname != "" {
			errs = append(errs, validateDNSSubdomain(ing.Hostname, p.Child("hostname"))...)
			if isIP(ing.Hostname) {
				errs = append(errs, field.Invalid(p.Child("hostname"), ing.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}
