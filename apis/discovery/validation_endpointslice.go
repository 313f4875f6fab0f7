package discovery

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

// kube's bounds on a slice.
const (
	maxTopologyLabels = 16
	maxAddresses      = 100
	maxPorts          = 20000
	maxEndpoints      = 1000
	maxZoneHints      = 8
	maxNodeHints      = 8
)

var (
	addressTypes  = []string{string(discoveryv1.AddressTypeFQDN), string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6)}
	portProtocols = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
)

// ValidateEndpointSlice validates a slice: its address type, ports and
// endpoints. On an update (old set), endpoints equal to old's are accepted
// whatever their errors, as older servers accepted them.
func ValidateEndpointSlice(eps, old *discoveryv1.EndpointSlice) field.ErrorList {
	var errs field.ErrorList
	typePath := field.NewPath("addressType")
	switch {
	case eps.AddressType == "":
		errs = append(errs, field.Required(typePath, ""))
	case !slices.Contains(addressTypes, string(eps.AddressType)):
		errs = append(errs, field.NotSupported(typePath, eps.AddressType, addressTypes))
	}
	errs = append(errs, validatePorts(eps.Ports, field.NewPath("ports"))...)
	endpointErrs := validateEndpoints(eps.Endpoints, eps.AddressType, field.NewPath("endpoints"))
	if len(endpointErrs) > 0 && old != nil && apiequality.Semantic.DeepEqual(old.Endpoints, eps.Endpoints) {
		endpointErrs = nil
	}
	return append(errs, endpointErrs...)
}

func validateEndpoints(endpoints []discoveryv1.Endpoint, addrType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	if len(endpoints) > maxEndpoints {
		return field.ErrorList{field.TooMany(fldPath, len(endpoints), maxEndpoints)}
	}
	var errs field.ErrorList
	for i := range endpoints {
		errs = append(errs, validateEndpoint(&endpoints[i], addrType, fldPath.Index(i))...)
	}
	return errs
}

func validateEndpoint(ep *discoveryv1.Endpoint, addrType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	addrPath := fldPath.Child("addresses")
	switch n := len(ep.Addresses); {
	case n == 0:
		// kube's declarative validation (authoritative here) says no more
		// than "Required value".
		errs = append(errs, field.Required(addrPath, ""))
	case n > maxAddresses:
		errs = append(errs, field.TooMany(addrPath, n, maxAddresses))
	}
	for i, addr := range ep.Addresses {
		errs = append(errs, validateAddress(addr, addrType, addrPath, i)...)
	}
	if ep.NodeName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*ep.NodeName, false) {
			errs = append(errs, field.Invalid(fldPath.Child("nodeName"), *ep.NodeName, msg))
		}
	}
	topologyPath := fldPath.Child("deprecatedTopology")
	if len(ep.DeprecatedTopology) > maxTopologyLabels {
		errs = append(errs, field.TooMany(topologyPath, len(ep.DeprecatedTopology), maxTopologyLabels))
	}
	errs = append(errs, metav1validation.ValidateLabels(ep.DeprecatedTopology, topologyPath)...)
	if _, ok := ep.DeprecatedTopology[corev1.LabelTopologyZone]; ok {
		errs = append(errs, field.InternalError(topologyPath.Key(corev1.LabelTopologyZone), errors.New("reserved key was not removed in conversion")))
	}
	if ep.Hostname != nil {
		for _, msg := range validation.IsDNS1123Label(*ep.Hostname) {
			errs = append(errs, field.Invalid(fldPath.Child("hostname"), *ep.Hostname, msg))
		}
	}
	if ep.Hints != nil {
		errs = append(errs, validateHints(ep.Hints, fldPath.Child("hints"))...)
	}
	return errs
}

// validateAddress validates the i-th address of addrPath as addrType
// requires; kube reports the wrong IP family at addrPath itself.
func validateAddress(addr string, addrType discoveryv1.AddressType, addrPath *field.Path, i int) field.ErrorList {
	idxPath := addrPath.Index(i)
	switch addrType {
	case discoveryv1.AddressTypeIPv4:
		if errs := validation.IsValidIPForLegacyField(idxPath, addr, true, nil); len(errs) > 0 {
			return errs
		}
		var errs field.ErrorList
		if !netutils.IsIPv4String(addr) {
			errs = append(errs, field.Invalid(addrPath, addr, "must be an IPv4 address"))
		}
		return append(errs, validateEndpointIP(addr, idxPath)...)
	case discoveryv1.AddressTypeIPv6:
		if errs := validation.IsValidIP(idxPath, addr); len(errs) > 0 {
			return errs
		}
		var errs field.ErrorList
		if !netutils.IsIPv6String(addr) {
			errs = append(errs, field.Invalid(addrPath, addr, "must be an IPv6 address"))
		}
		return append(errs, validateEndpointIP(addr, idxPath)...)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(idxPath, addr)
	}
	return nil
}

// validateEndpointIP refuses the addresses no endpoint can have: the
// unspecified address, loopback and link-local ranges.
func validateEndpointIP(addr string, fldPath *field.Path) field.ErrorList {
	ip := netutils.ParseIPSloppy(addr)
	if ip == nil {
		return field.ErrorList{field.Invalid(fldPath, addr, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if ip.IsUnspecified() {
		errs = append(errs, field.Invalid(fldPath, addr, fmt.Sprintf("may not be unspecified (%v)", addr)))
	}
	if ip.IsLoopback() {
		errs = append(errs, field.Invalid(fldPath, addr, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(fldPath, addr, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(fldPath, addr, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// validatePorts: DNS label names, unique (the empty name included), a known
// protocol and a qualified appProtocol.
func validatePorts(ports []discoveryv1.EndpointPort, fldPath *field.Path) field.ErrorList {
	if len(ports) > maxPorts {
		return field.ErrorList{field.TooMany(fldPath, len(ports), maxPorts)}
	}
	var errs field.ErrorList
	names := make([]string, 0, len(ports))
	for i, p := range ports {
		idxPath := fldPath.Index(i)
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			for _, msg := range validation.IsDNS1123Label(name) {
				errs = append(errs, field.Invalid(idxPath.Child("name"), name, msg))
			}
		}
		if slices.Contains(names, name) {
			errs = append(errs, field.Duplicate(idxPath.Child("name"), p.Name))
		} else {
			names = append(names, name)
		}
		switch {
		case p.Protocol == nil:
			errs = append(errs, field.Required(idxPath.Child("protocol"), ""))
		case !slices.Contains(portProtocols, string(*p.Protocol)):
			errs = append(errs, field.NotSupported(idxPath.Child("protocol"), *p.Protocol, portProtocols))
		}
		if p.AppProtocol != nil {
			for _, msg := range validation.IsQualifiedName(*p.AppProtocol) {
				errs = append(errs, field.Invalid(idxPath.Child("appProtocol"), *p.AppProtocol, msg))
			}
		}
	}
	return errs
}

// validateHints: at most 8 unique zones (label values) and 8 unique nodes.
func validateHints(h *discoveryv1.EndpointHints, fldPath *field.Path) field.ErrorList {
	zonesPath := fldPath.Child("forZones")
	if len(h.ForZones) > maxZoneHints {
		return field.ErrorList{field.TooMany(zonesPath, len(h.ForZones), maxZoneHints)}
	}
	var errs field.ErrorList
	zones := make([]string, 0, len(h.ForZones))
	for i, z := range h.ForZones {
		p := zonesPath.Index(i).Child("name")
		if slices.Contains(zones, z.Name) {
			errs = append(errs, field.Duplicate(p, z.Name))
		} else {
			zones = append(zones, z.Name)
		}
		for _, msg := range validation.IsValidLabelValue(z.Name) {
			errs = append(errs, field.Invalid(p, z.Name, msg))
		}
	}
	nodesPath := fldPath.Child("forNodes")
	if len(h.ForNodes) > maxNodeHints {
		return append(errs, field.TooMany(nodesPath, len(h.ForNodes), maxNodeHints))
	}
	nodes := make([]string, 0, len(h.ForNodes))
	for i, n := range h.ForNodes {
		p := nodesPath.Index(i).Child("name")
		if slices.Contains(nodes, n.Name) {
			errs = append(errs, field.Duplicate(p, n.Name))
		} else {
			nodes = append(nodes, n.Name)
		}
		for _, msg := range apivalidation.NameIsDNSSubdomain(n.Name, false) {
			errs = append(errs, field.Invalid(p, n.Name, msg))
		}
	}
	return errs
}
