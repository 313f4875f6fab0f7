package networking

import (
	"fmt"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"
)

var (
	pathTypes            = []string{string(networkingv1.PathTypeExact), string(networkingv1.PathTypeImplementationSpecific), string(networkingv1.PathTypePrefix)}
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// ingressOptions relax the rules for what an existing ingress already had.
type ingressOptions struct {
	allowInvalidSecretName       bool
	allowInvalidWildcardHostRule bool
}

// ValidateIngressSpec validates an ingress spec: a default backend or rules,
// then each backend, rule, TLS entry and the class name. Service names are
// DNS labels (kube's RelaxedServiceNameValidation is GA in 1.37).
func ValidateIngressSpec(spec *networkingv1.IngressSpec, fldPath *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(fldPath, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(spec.DefaultBackend, fldPath.Child("defaultBackend"))...)
	}
	for i := range spec.Rules {
		errs = append(errs, validateIngressRule(&spec.Rules[i], fldPath.Child("rules").Index(i), opts)...)
	}
	for i, tls := range spec.TLS {
		errs = append(errs, validateIngressTLS(tls, fldPath.Child("tls").Index(i), opts)...)
	}
	if name := spec.IngressClassName; name != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*name, false) {
			errs = append(errs, field.Invalid(fldPath.Child("ingressClassName"), *name, msg))
		}
	}
	return errs
}

func validateIngressRule(rule *networkingv1.IngressRule, fldPath *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	wildcard := false
	if host := rule.Host; host != "" {
		hostPath := fldPath.Child("host")
		if netutils.ParseIPSloppy(host) != nil {
			errs = append(errs, field.Invalid(hostPath, host, "must be a DNS name, not an IP address"))
		}
		msgs := validation.IsDNS1123Subdomain(host)
		if strings.Contains(host, "*") {
			msgs, wildcard = validation.IsWildcardDNS1123Subdomain(host), true
		}
		for _, msg := range msgs {
			errs = append(errs, field.Invalid(hostPath, host, msg))
		}
	}
	if !wildcard || !opts.allowInvalidWildcardHostRule {
		errs = append(errs, validateIngressRuleValue(&rule.IngressRuleValue, fldPath)...)
	}
	return errs
}

func validateIngressRuleValue(v *networkingv1.IngressRuleValue, fldPath *field.Path) field.ErrorList {
	if v.HTTP == nil {
		return nil
	}
	var errs field.ErrorList
	pathsPath := fldPath.Child("http", "paths")
	if len(v.HTTP.Paths) == 0 {
		errs = append(errs, field.Required(pathsPath, ""))
	}
	for i := range v.HTTP.Paths {
		errs = append(errs, validateHTTPIngressPath(&v.HTTP.Paths[i], pathsPath.Index(i))...)
	}
	return errs
}

func validateHTTPIngressPath(p *networkingv1.HTTPIngressPath, fldPath *field.Path) field.ErrorList {
	if p.PathType == nil {
		return field.ErrorList{field.Required(fldPath.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	pathPath := fldPath.Child("path")
	switch *p.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(pathPath, p.Path, "must be an absolute path"))
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(p.Path, seq) {
				errs = append(errs, field.Invalid(pathPath, p.Path, fmt.Sprintf("must not contain '%s'", seq)))
			}
		}
		for _, suffix := range invalidPathSuffixes {
			if strings.HasSuffix(p.Path, suffix) {
				errs = append(errs, field.Invalid(pathPath, p.Path, fmt.Sprintf("cannot end with '%s'", suffix)))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if p.Path != "" && !strings.HasPrefix(p.Path, "/") {
			errs = append(errs, field.Invalid(pathPath, p.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("pathType"), *p.PathType, pathTypes))
	}
	return append(errs, validateIngressBackend(&p.Backend, fldPath.Child("backend"))...)
}

// validateIngressBackend requires exactly one of a resource and a service;
// a service needs a name and a port name or number.
func validateIngressBackend(b *networkingv1.IngressBackend, fldPath *field.Path) field.ErrorList {
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(fldPath, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		return validateTypedLocalObjectReference(b.Resource.APIGroup, b.Resource.Kind, b.Resource.Name, fldPath.Child("resource"))
	case b.Service == nil:
		return field.ErrorList{field.Invalid(fldPath, "", "resource or service backend is required")}
	}
	var errs field.ErrorList
	svc := b.Service
	if svc.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("service", "name"), ""))
	} else {
		for _, msg := range apivalidation.NameIsDNSLabel(svc.Name, false) {
			errs = append(errs, field.Invalid(fldPath.Child("service", "name"), svc.Name, msg))
		}
	}
	portPath := fldPath.Child("service", "port")
	switch name, number := svc.Port.Name, svc.Port.Number; {
	case name != "" && number != 0:
		errs = append(errs, field.Invalid(fldPath, "", "cannot set both port name & port number"))
	case name != "":
		for _, msg := range validation.IsValidPortName(name) {
			errs = append(errs, field.Invalid(portPath.Child("name"), name, msg))
		}
	case number != 0:
		for _, msg := range validation.IsValidPortNum(int(number)) {
			errs = append(errs, field.Invalid(portPath.Child("number"), number, msg))
		}
	default:
		errs = append(errs, field.Required(fldPath, "port name or number is required"))
	}
	return errs
}

// validateTypedLocalObjectReference validates a reference to an object of
// any group: an optional DNS subdomain group, and a kind and a name that
// can be path segments.
func validateTypedLocalObjectReference(group *string, kind, name string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if group != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*group) {
			errs = append(errs, field.Invalid(fldPath.Child("apiGroup"), *group, msg))
		}
	}
	errs = append(errs, requiredSegment(kind, fldPath.Child("kind"))...)
	return append(errs, requiredSegment(name, fldPath.Child("name"))...)
}

func validateIngressTLS(tls networkingv1.IngressTLS, fldPath *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	for i, host := range tls.Hosts {
		msgs := validation.IsDNS1123Subdomain(host)
		if strings.Contains(host, "*") {
			msgs = validation.IsWildcardDNS1123Subdomain(host)
		}
		for _, msg := range msgs {
			errs = append(errs, field.Invalid(fldPath.Child("hosts").Index(i), host, msg))
		}
	}
	if !opts.allowInvalidSecretName {
		for _, msg := range secretNameErrors(tls.SecretName) {
			errs = append(errs, field.Invalid(fldPath.Child("secretName"), tls.SecretName, msg))
		}
	}
	return errs
}

func secretNameErrors(name string) []string {
	if name == "" {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(name, false)
}

func hasInvalidSecretName(old *networkingv1.Ingress) bool {
	for _, tls := range old.Spec.TLS {
		if len(secretNameErrors(tls.SecretName)) > 0 {
			return true
		}
	}
	return false
}

func hasInvalidWildcardHostRule(old *networkingv1.Ingress) bool {
	for i := range old.Spec.Rules {
		rule := &old.Spec.Rules[i]
		if strings.Contains(rule.Host, "*") && len(validateIngressRuleValue(&rule.IngressRuleValue, nil)) > 0 {
			return true
		}
	}
	return false
}

// ValidateIngressLoadBalancerStatus validates the addresses of a load
// balancer status; IPs old already had are accepted as they are.
func ValidateIngressLoadBalancerStatus(s, old *networkingv1.IngressLoadBalancerStatus, fldPath *field.Path) field.ErrorList {
	var oldIPs []string
	for _, lb := range old.Ingress {
		if lb.IP != "" {
			oldIPs = append(oldIPs, lb.IP)
		}
	}
	var errs field.ErrorList
	for i, lb := range s.Ingress {
		idxPath := fldPath.Child("ingress").Index(i)
		if lb.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(idxPath.Child("ip"), lb.IP, true, oldIPs)...)
		}
		if lb.Hostname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(lb.Hostname) {
				errs = append(errs, field.Invalid(idxPath.Child("hostname"), lb.Hostname, msg))
			}
			if netutils.ParseIPSloppy(lb.Hostname) != nil {
				errs = append(errs, field.Invalid(idxPath.Child("hostname"), lb.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}
