package printers

import (
	"fmt"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var networkingConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	networkingKind("Ingress"):       New(ingressColumns, ingressRow),
	networkingKind("IngressClass"):  New(ingressClassColumns, ingressClassRow),
	networkingKind("NetworkPolicy"): New(networkPolicyColumns, networkPolicyRow),
	networkingKind("ServiceCIDR"):   New(serviceCIDRColumns, serviceCIDRRow),
}

func networkingKind(kind string) schema.GroupVersionKind {
	return networkingv1.SchemeGroupVersion.WithKind(kind)
}

var ingressColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
	column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
	column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
	column("Ports", "string", "Ports of TLS configurations that open"),
	ageColumn(),
}

func ingressRow(in *networkingv1.Ingress, now time.Time) (metav1.TableRow, error) {
	class := "<none>"
	if in.Spec.IngressClassName != nil {
		class = *in.Spec.IngressClassName
	}
	set := map[string]bool{}
	for _, lb := range in.Status.LoadBalancer.Ingress {
		if lb.IP != "" {
			set[lb.IP] = true
		} else if lb.Hostname != "" {
			set[lb.Hostname] = true
		}
	}
	ports := "80"
	if len(in.Spec.TLS) != 0 {
		ports = "80, 443"
	}
	return rowOf(in.Name, class, ingressHosts(in.Spec.Rules), strings.Join(sortedKeys(set), ","), ports, since(in.CreationTimestamp, now))
}

// ingressHosts lists the first three hosts of the rules and, when rules
// follow the third, how many rules there are beyond three; "*" when no rule
// has a host.
func ingressHosts(rules []networkingv1.IngressRule) string {
	var hosts []string
	more := false
	for _, r := range rules {
		if len(hosts) == 3 {
			more = true
			break
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	if len(hosts) == 0 {
		return "*"
	}
	out := strings.Join(hosts, ",")
	if more {
		out += fmt.Sprintf(" + %d more...", len(rules)-3)
	}
	return out
}

var ingressClassColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Controller", "string", "Controller that is responsible for handling this class"),
	column("Parameters", "string", "A reference to a resource with additional parameters"),
	ageColumn(),
}

func ingressClassRow(ic *networkingv1.IngressClass, now time.Time) (metav1.TableRow, error) {
	name := ic.Name
	if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
		name += " (default)"
	}
	params := "<none>"
	if p := ic.Spec.Parameters; p != nil {
		params = p.Kind
		if p.APIGroup != nil {
			params += "." + *p.APIGroup
		}
		params += "/" + p.Name
	}
	return rowOf(name, ic.Spec.Controller, params, since(ic.CreationTimestamp, now))
}

var networkPolicyColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Pod-Selector", "string", networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]),
	ageColumn(),
}

func networkPolicyRow(np *networkingv1.NetworkPolicy, now time.Time) (metav1.TableRow, error) {
	return rowOf(np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), since(np.CreationTimestamp, now))
}

var serviceCIDRColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("CIDRs", "string", networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]),
	ageColumn(),
}

func serviceCIDRRow(sc *networkingv1.ServiceCIDR, now time.Time) (metav1.TableRow, error) {
	return rowOf(sc.Name, strings.Join(sc.Spec.CIDRs, ","), since(sc.CreationTimestamp, now))
}
