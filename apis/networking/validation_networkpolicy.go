package networking

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

var (
	policyProtocols = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}
	policyTypes     = []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}
)

// networkPolicyOptions relax the rules for what an existing policy had.
type networkPolicyOptions struct {
	allowInvalidLabelValue bool
	validOldCIDRs          []string
}

func validateSelector(sel *metav1.LabelSelector, opts networkPolicyOptions, fldPath *field.Path) field.ErrorList {
	o := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValue}
	return metav1validation.ValidateLabelSelector(sel, o, fldPath)
}

// ValidateNetworkPolicySpec validates a policy: its pod selector, the ports
// and peers of each rule and at most the two policy types.
func ValidateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, opts networkPolicyOptions, fldPath *field.Path) field.ErrorList {
	errs := validateSelector(&spec.PodSelector, opts, fldPath.Child("podSelector"))
	for i, rule := range spec.Ingress {
		rulePath := fldPath.Child("ingress").Index(i)
		errs = append(errs, validatePolicyPorts(rule.Ports, rulePath.Child("ports"))...)
		for j := range rule.From {
			errs = append(errs, validatePeer(&rule.From[j], opts, rulePath.Child("from").Index(j))...)
		}
	}
	for i, rule := range spec.Egress {
		rulePath := fldPath.Child("egress").Index(i)
		errs = append(errs, validatePolicyPorts(rule.Ports, rulePath.Child("ports"))...)
		for j := range rule.To {
			errs = append(errs, validatePeer(&rule.To[j], opts, rulePath.Child("to").Index(j))...)
		}
	}
	typesPath := fldPath.Child("policyTypes")
	if len(spec.PolicyTypes) > len(policyTypes) {
		return append(errs, field.Invalid(typesPath, &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if !slices.Contains(policyTypes, string(t)) {
			errs = append(errs, field.NotSupported(typesPath.Index(i), t, policyTypes))
		}
	}
	return errs
}

func validatePolicyPorts(ports []networkingv1.NetworkPolicyPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range ports {
		errs = append(errs, validatePolicyPort(&ports[i], fldPath.Index(i))...)
	}
	return errs
}

// validatePolicyPort: a known protocol, a port number or name, and an end
// port only after a numeric port.
func validatePolicyPort(p *networkingv1.NetworkPolicyPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p.Protocol != nil && !slices.Contains(policyProtocols, string(*p.Protocol)) {
		errs = append(errs, field.NotSupported(fldPath.Child("protocol"), *p.Protocol, policyProtocols))
	}
	endPath := fldPath.Child("endPort")
	switch {
	case p.Port == nil:
		if p.EndPort != nil {
			errs = append(errs, field.Invalid(endPath, *p.EndPort, "may not be specified when `port` is not specified"))
		}
	case p.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(p.Port.IntVal)) {
			errs = append(errs, field.Invalid(fldPath.Child("port"), p.Port.IntVal, msg))
		}
		if p.EndPort != nil {
			if *p.EndPort < p.Port.IntVal {
				errs = append(errs, field.Invalid(endPath, *p.EndPort, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*p.EndPort)) {
				errs = append(errs, field.Invalid(endPath, *p.EndPort, msg))
			}
		}
	default:
		if p.EndPort != nil {
			errs = append(errs, field.Invalid(endPath, *p.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(p.Port.StrVal) {
			errs = append(errs, field.Invalid(fldPath.Child("port"), p.Port.StrVal, msg))
		}
	}
	return errs
}

// validatePeer requires one kind of peer at least, and an ipBlock alone.
func validatePeer(peer *networkingv1.NetworkPolicyPeer, opts networkPolicyOptions, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if peer.PodSelector != nil {
		n++
		errs = append(errs, validateSelector(peer.PodSelector, opts, fldPath.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, validateSelector(peer.NamespaceSelector, opts, fldPath.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		n++
		errs = append(errs, validateIPBlock(peer.IPBlock, opts, fldPath.Child("ipBlock"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(fldPath, "must specify a peer"))
	case n > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(fldPath, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// validateIPBlock: a CIDR, and exceptions strictly inside it. CIDRs the old
// policy had are accepted as they are.
func validateIPBlock(b *networkingv1.IPBlock, opts networkPolicyOptions, fldPath *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(fldPath.Child("cidr"), "")}
	}
	errs := validation.IsValidCIDRForLegacyField(fldPath.Child("cidr"), b.CIDR, true, opts.validOldCIDRs)
	_, cidr, err := netutils.ParseCIDRSloppy(b.CIDR)
	if err != nil {
		return errs
	}
	cidrBits, _ := cidr.Mask.Size()
	for i, s := range b.Except {
		exceptPath := fldPath.Child("except").Index(i)
		errs = append(errs, validation.IsValidCIDRForLegacyField(exceptPath, s, true, opts.validOldCIDRs)...)
		_, except, err := netutils.ParseCIDRSloppy(s)
		if err != nil {
			continue
		}
		exceptBits, _ := except.Mask.Size()
		if !cidr.Contains(except.IP) || cidrBits >= exceptBits {
			errs = append(errs, field.Invalid(exceptPath, s, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}
