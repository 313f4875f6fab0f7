package core

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestValidateEndpoints(t *testing.T) {
	addr := func(ip string) []corev1.EndpointAddress { return []corev1.EndpointAddress{{IP: ip}} }
	cases := []struct {
		name    string
		subsets []corev1.EndpointSubset
		want    []wantErr
	}{
		{"valid", []corev1.EndpointSubset{{Addresses: addr("10.1.2.3"), Ports: []corev1.EndpointPort{{Port: 443, Protocol: "TCP"}}}}, nil},
		{"no addresses", []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Port: 443, Protocol: "TCP"}}}}, []wantErr{req("subsets[0]")}},
		{"loopback", []corev1.EndpointSubset{{Addresses: addr("127.0.0.1")}}, []wantErr{inv("subsets[0].addresses[0].ip")}},
		{"link-local", []corev1.EndpointSubset{{NotReadyAddresses: addr("169.254.1.1")}}, []wantErr{inv("subsets[0].notReadyAddresses[0].ip")}},
		{"unspecified", []corev1.EndpointSubset{{Addresses: addr("0.0.0.0")}}, []wantErr{inv("subsets[0].addresses[0].ip")}},
		{"not an IP", []corev1.EndpointSubset{{Addresses: addr("host")}},
			[]wantErr{inv("subsets[0].addresses[0].ip"), inv("subsets[0].addresses[0].ip")}},
		{"unnamed of two ports", []corev1.EndpointSubset{{Addresses: addr("10.1.2.3"),
			Ports: []corev1.EndpointPort{{Name: "a", Port: 1, Protocol: "TCP"}, {Port: 2, Protocol: "UDP"}}}}, []wantErr{req("subsets[0].ports[1].name")}},
		{"bad port and hostname", []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.1.2.3", Hostname: "A_B"}},
			Ports: []corev1.EndpointPort{{Port: 0, Protocol: "TCP"}}}}, []wantErr{inv("subsets[0].addresses[0].hostname"), inv("subsets[0].ports[0].port")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep := &corev1.Endpoints{Subsets: c.subsets}
			EndpointsStrategy{}.Default(ep)
			checkErrs(t, EndpointsStrategy{}.Validate(context.Background(), ep), c.want...)
		})
	}
	if errs := (EndpointsStrategy{}).Validate(context.Background(), &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: addr("127.0.0.1")}}}); len(errs) == 0 ||
		errs[0].Detail != "may not be in the loopback range (127.0.0.0/8, ::1/128)" {
		t.Errorf("loopback message: %v", errs)
	}
}

func TestValidateEndpointsUpdateKeepsOldSubsets(t *testing.T) {
	old := &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "127.0.0.1"}}}}}
	ep := old.DeepCopy()
	ep.Labels = map[string]string{"a": "b"}
	if errs := (EndpointsStrategy{}).ValidateUpdate(context.Background(), ep, old); len(errs) != 0 {
		t.Errorf("unchanged subsets are not validated again: %v", errs)
	}
	ep.Subsets[0].Addresses[0].IP = "127.0.0.2"
	if errs := (EndpointsStrategy{}).ValidateUpdate(context.Background(), ep, old); len(errs) == 0 {
		t.Error("changed loopback subsets pass")
	}
}
