package serviceresolver_test

import (
	"context"
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/proxy/serviceresolver"
)

func service(name string, spec corev1.ServiceSpec) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: spec}
}

func slice(family discoveryv1.AddressType, port int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{AddressType: family, Endpoints: eps,
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port)}}}
}

func ep(addr string, ready *bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
}

func TestResolve(t *testing.T) {
	ports := []corev1.ServicePort{{Name: "https", Port: 443}}
	services := map[string]*corev1.Service{
		"cluster":  service("cluster", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.9", Ports: ports}),
		"headless": service("headless", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", Ports: ports}),
		"external": service("external", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "api.example.com"}),
		"dual": service("dual", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.0.0.8", Ports: ports,
			IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}}),
		"empty": service("empty", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.0.0.7", Ports: ports}),
	}
	slices := map[string][]*discoveryv1.EndpointSlice{
		"cluster": {slice(discoveryv1.AddressTypeIPv4, 8443, ep("10.1.0.1", ptr.To(false)), ep("10.1.0.2", nil))},
		"dual":    {slice(discoveryv1.AddressTypeIPv4, 8443, ep("10.1.0.3", nil)), slice(discoveryv1.AddressTypeIPv6, 8443, ep("fd00::3", ptr.To(true)))},
		"empty":   {slice(discoveryv1.AddressTypeIPv4, 8443, ep("10.1.0.4", ptr.To(false)))},
	}
	get := func(_ context.Context, ns, name string) (*corev1.Service, error) {
		if s := services[name]; s != nil {
			return s, nil
		}
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, name)
	}
	list := func(_ context.Context, ns, name string) ([]*discoveryv1.EndpointSlice, error) {
		return slices[name], nil
	}
	cases := []struct {
		name    string
		routing bool
		port    int32
		want    string
		err     string
	}{
		{"cluster", false, 443, "https://10.0.0.9:443", ""},
		{"cluster", false, 444, "", `no service port 444 found for service "cluster"`},
		{"headless", false, 443, "", `cannot route to service with ClusterIP "None"`},
		{"external", false, 8443, "https://api.example.com:8443", ""},
		{"missing", false, 443, "", `services "missing" not found`},
		{"cluster", true, 443, "https://10.1.0.2:8443", ""}, // the one ready endpoint
		{"dual", true, 443, "https://[fd00::3]:8443", ""},   // the first family first
		{"empty", true, 443, "", `no endpoints available for service "empty"`},
		{"external", true, 443, "", `unsupported service type "ExternalName"`},
		{"cluster", true, 444, "", `no service port 444 found for service "cluster"`},
	}
	for _, tc := range cases {
		r := serviceresolver.Resolver{Services: get, Slices: list, EndpointRouting: tc.routing}
		for range 10 { // random choices must never pick what they may not
			u, err := r.Resolve(context.Background(), "ns", tc.name, tc.port)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("%s routing=%v: err %v, want %s", tc.name, tc.routing, err, tc.err)
				}
				break
			}
			if err != nil || u.String() != tc.want {
				t.Errorf("%s routing=%v: %v %v, want %s", tc.name, tc.routing, u, err, tc.want)
				break
			}
		}
	}
}

func TestLoopback(t *testing.T) {
	loop, _ := url.Parse("https://127.0.0.1:6443")
	r := serviceresolver.Resolver{Loopback: loop, Services: func(context.Context, string, string) (*corev1.Service, error) {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "kubernetes")
	}}
	if u, err := r.Resolve(context.Background(), "default", "kubernetes", 443); err != nil || u.String() != loop.String() {
		t.Errorf("kubernetes:443 -> %v %v", u, err)
	}
	if _, err := r.Resolve(context.Background(), "default", "kubernetes", 444); err == nil {
		t.Error("kubernetes:444 went to the loopback")
	}
}
