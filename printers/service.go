package printers

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

var serviceColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Type", "string", corev1.ServiceSpec{}.SwaggerDoc()["type"]),
	column("Cluster-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["clusterIP"]),
	column("External-IP", "string", corev1.ServiceSpec{}.SwaggerDoc()["externalIPs"]),
	column("Port(s)", "string", corev1.ServiceSpec{}.SwaggerDoc()["ports"]),
	ageColumn(),
	wideColumn("Selector", "string", corev1.ServiceSpec{}.SwaggerDoc()["selector"]),
}

func serviceRow(svc *corev1.Service, now time.Time) (metav1.TableRow, error) {
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	return rowOf(svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), orNone(servicePorts(svc.Spec.Ports)),
		since(svc.CreationTimestamp, now), labels.FormatLabels(svc.Spec.Selector))
}

// serviceExternalIP is where the service is reached from outside: its
// external IPs, its load balancer's addresses, or its external name.
func serviceExternalIP(svc *corev1.Service) string {
	external := svc.Spec.ExternalIPs
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(external) > 0 {
			return strings.Join(external, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		var addrs []string
		if lb := loadBalancerAddresses(svc.Status.LoadBalancer.Ingress); lb != "" {
			addrs = strings.Split(lb, ",")
		}
		if addrs = append(addrs, external...); len(addrs) > 0 {
			return strings.Join(addrs, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

// loadBalancerAddresses lists the distinct IPs (or else host names) of a
// load balancer's ingress points, sorted.
func loadBalancerAddresses(ingress []corev1.LoadBalancerIngress) string {
	set := map[string]bool{}
	for _, in := range ingress {
		if in.IP != "" {
			set[in.IP] = true
		} else if in.Hostname != "" {
			set[in.Hostname] = true
		}
	}
	return strings.Join(sortedKeys(set), ",")
}

// servicePorts lists port/protocol, or port:nodePort/protocol.
func servicePorts(ports []corev1.ServicePort) string {
	out := make([]string, len(ports))
	for i, p := range ports {
		out[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			out[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return strings.Join(out, ",")
}

var endpointsColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Endpoints", "string", corev1.Endpoints{}.SwaggerDoc()["subsets"]),
	ageColumn(),
}

func endpointsRow(ep *corev1.Endpoints, now time.Time) (metav1.TableRow, error) {
	return rowOf(ep.Name, endpointAddresses(ep), since(ep.CreationTimestamp, now))
}

// endpointAddresses lists the first three ready addresses, with each of
// their subset's ports.
func endpointAddresses(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	var all []string
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			// A headless service may have no ports.
			for _, a := range ss.Addresses {
				all = append(all, a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			for _, a := range ss.Addresses {
				all = append(all, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	return firstOf(all, 3, "")
}
