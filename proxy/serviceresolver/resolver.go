// Package serviceresolver finds where to send a request meant for a
// Service's port, as kube-apiserver does for APIServices and webhooks: the
// Service's cluster IP, its ExternalName host, or, with endpoint routing
// (--enable-aggregator-routing), a ready endpoint of its EndpointSlices.
package serviceresolver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ServiceGetter returns a Service, or kube's NotFound error.
type ServiceGetter func(ctx context.Context, namespace, name string) (*corev1.Service, error)

// SliceLister returns the EndpointSlices of a Service (those labelled
// kubernetes.io/service-name=service).
type SliceLister func(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error)

// Resolver resolves Services to URLs.
type Resolver struct {
	Services ServiceGetter
	// Slices is needed only with EndpointRouting.
	Slices SliceLister
	// EndpointRouting sends to an endpoint rather than the cluster IP.
	EndpointRouting bool
	// Loopback, when set, is where the default/kubernetes Service's port
	// 443 goes: the server itself, reached without a network hop.
	Loopback *url.URL
}

// Resolve returns https://host:port for namespace/name's port.
func (r Resolver) Resolve(ctx context.Context, namespace, name string, port int32) (*url.URL, error) {
	if r.Loopback != nil && namespace == "default" && name == "kubernetes" && port == 443 {
		u := *r.Loopback
		return &u, nil
	}
	svc, err := r.Services(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if r.EndpointRouting {
		return r.endpoint(ctx, svc, port)
	}
	return clusterAddress(svc, port)
}

func httpsTo(host string, port int32) *url.URL {
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(int(port)))}
}

func servicePort(svc *corev1.Service, port int32) (*corev1.ServicePort, error) {
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			return &svc.Spec.Ports[i], nil
		}
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, svc.Name))
}

func routable(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeClusterIP || t == corev1.ServiceTypeLoadBalancer || t == corev1.ServiceTypeNodePort
}

// clusterAddress is kube's default: the cluster IP and the Service port,
// or the ExternalName host and the port asked for.
func clusterAddress(svc *corev1.Service, port int32) (*url.URL, error) {
	switch {
	case svc.Spec.Type == corev1.ServiceTypeClusterIP && svc.Spec.ClusterIP == corev1.ClusterIPNone:
		return nil, fmt.Errorf(`cannot route to service with ClusterIP "None"`)
	case routable(svc.Spec.Type):
		p, err := servicePort(svc, port)
		if err != nil {
			return nil, err
		}
		return httpsTo(svc.Spec.ClusterIP, p.Port), nil
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return httpsTo(svc.Spec.ExternalName, port), nil
	default:
		return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
}

// endpoint picks a ready endpoint at random among the slices that serve
// the Service port's name, those of the Service's first IP family first.
func (r Resolver) endpoint(ctx context.Context, svc *corev1.Service, port int32) (*url.URL, error) {
	if !routable(svc.Spec.Type) {
		return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
	p, err := servicePort(svc, port)
	if err != nil {
		return nil, err
	}
	if r.Slices == nil {
		return nil, noEndpoints(svc.Name)
	}
	all, err := r.Slices(ctx, svc.Namespace, svc.Name)
	if err != nil {
		return nil, err
	}
	var preferred discoveryv1.AddressType
	if len(svc.Spec.IPFamilies) > 0 {
		preferred = discoveryv1.AddressType(svc.Spec.IPFamilies[0])
	}
	hostPort, err := RandomEndpoint(svc.Name, all, p.Name, preferred, nil)
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "https", Host: hostPort}, nil
}

func noEndpoints(service string) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", service))
}

// RandomEndpoint is the host:port of a ready endpoint, from a random
// start, of a slice that serves the port named portName, as kube picks
// one: the slices of the preferred address type first, each group in
// random order. valid, when set, skips the endpoints it refuses. None is
// kube's 503.
func RandomEndpoint(service string, all []*discoveryv1.EndpointSlice, portName string, preferred discoveryv1.AddressType,
	valid func(*discoveryv1.Endpoint) bool) (string, error) {
	all = slices.Clone(all)
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	if preferred != "" {
		slices.SortStableFunc(all, func(a, b *discoveryv1.EndpointSlice) int {
			return boolRank(a.AddressType != preferred) - boolRank(b.AddressType != preferred)
		})
	}
	for _, s := range all {
		if host, port, ok := readyEndpoint(s, portName, valid); ok {
			return net.JoinHostPort(host, strconv.Itoa(int(port))), nil
		}
	}
	return "", noEndpoints(service)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readyEndpoint is a ready, valid endpoint of s, from a random start, and
// the slice's port named portName.
func readyEndpoint(s *discoveryv1.EndpointSlice, portName string, valid func(*discoveryv1.Endpoint) bool) (string, int32, bool) {
	for _, p := range s.Ports {
		if p.Name == nil || *p.Name != portName || p.Port == nil || len(s.Endpoints) == 0 {
			continue
		}
		start := rand.IntN(len(s.Endpoints))
		for i := range s.Endpoints {
			ep := &s.Endpoints[(start+i)%len(s.Endpoints)]
			if (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) || len(ep.Addresses) == 0 {
				continue
			}
			if valid != nil && !valid(ep) {
				continue
			}
			return ep.Addresses[0], *p.Port, true
		}
	}
	return "", 0, false
}
