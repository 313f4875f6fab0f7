package discovery

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

var ctx = context.Background()

func check(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = string(e.Type) + " " + e.Field
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("errors = %v\nwant     %v\n(%v)", got, want, errs)
	}
}

func slice(mutate func(*discoveryv1.EndpointSlice)) *discoveryv1.EndpointSlice {
	eps := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-abc", Namespace: "ns", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, NodeName: ptr.To("n1")}},
		Ports:       []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}},
	}
	EndpointSliceStrategy{}.Default(eps)
	if mutate != nil {
		mutate(eps)
	}
	return eps
}

func TestEndpointSliceDefaults(t *testing.T) {
	eps := slice(nil)
	if *eps.Ports[0].Name != "" || *eps.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("port defaults: %+v", eps.Ports[0])
	}
}

func TestValidateEndpointSlice(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*discoveryv1.EndpointSlice)
		want   []string
	}{
		{"valid", nil, nil},
		{"no address type", func(e *discoveryv1.EndpointSlice) { e.AddressType = "" }, []string{"FieldValueRequired addressType"}},
		{"unknown address type", func(e *discoveryv1.EndpointSlice) { e.AddressType = "MAC" }, []string{"FieldValueNotSupported addressType"}},
		{"IPv6 in an IPv4 slice", func(e *discoveryv1.EndpointSlice) { e.Endpoints[0].Addresses = []string{"fd00::1"} },
			[]string{"FieldValueInvalid endpoints[0].addresses"}},
		{"loopback", func(e *discoveryv1.EndpointSlice) { e.Endpoints[0].Addresses = []string{"127.0.0.1"} },
			[]string{"FieldValueInvalid endpoints[0].addresses[0]"}},
		{"not an IP", func(e *discoveryv1.EndpointSlice) { e.Endpoints[0].Addresses = []string{"web"} },
			[]string{"FieldValueInvalid endpoints[0].addresses[0]"}},
		{"no address", func(e *discoveryv1.EndpointSlice) { e.Endpoints[0].Addresses = nil }, []string{"FieldValueRequired endpoints[0].addresses"}},
		{"FQDN", func(e *discoveryv1.EndpointSlice) {
			e.AddressType = discoveryv1.AddressTypeFQDN
			e.Endpoints[0].Addresses = []string{"db.example.com", "x"}
		}, []string{"FieldValueInvalid endpoints[0].addresses[1]"}},
		{"endpoint fields", func(e *discoveryv1.EndpointSlice) {
			e.Endpoints[0].NodeName, e.Endpoints[0].Hostname = ptr.To("N_1"), ptr.To("a.b")
			e.Endpoints[0].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "z"}, {Name: "z"}}}
		}, []string{"FieldValueInvalid endpoints[0].nodeName", "FieldValueInvalid endpoints[0].hostname", "FieldValueDuplicate endpoints[0].hints.forZones[1].name"}},
		{"ports", func(e *discoveryv1.EndpointSlice) {
			e.Ports = append(e.Ports, discoveryv1.EndpointPort{Name: ptr.To(""), Protocol: ptr.To[corev1.Protocol]("ICMP"), AppProtocol: ptr.To("a b")},
				discoveryv1.EndpointPort{Name: ptr.To("Http"), Protocol: ptr.To(corev1.ProtocolUDP)})
		}, []string{"FieldValueDuplicate ports[1].name", "FieldValueNotSupported ports[1].protocol", "FieldValueInvalid ports[1].appProtocol",
			"FieldValueInvalid ports[2].name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, EndpointSliceStrategy{}.Validate(ctx, slice(tt.mutate)), tt.want...)
		})
	}
}

func TestEndpointSliceUpdate(t *testing.T) {
	old := slice(func(e *discoveryv1.EndpointSlice) {
		e.Generation = 1
		e.Endpoints[0].Addresses = []string{"127.0.0.1"} // accepted by an older server
		e.Endpoints[0].NodeName = nil
		e.Endpoints[0].DeprecatedTopology = map[string]string{corev1.LabelHostname: "n1"}
	})
	upd := old.DeepCopy()
	EndpointSliceStrategy{}.PrepareForUpdate(ctx, upd, old)
	if upd.Generation != 1 || upd.Endpoints[0].DeprecatedTopology == nil {
		t.Fatalf("unchanged update: %+v", upd)
	}
	// Unchanged invalid endpoints stay accepted; the type is immutable.
	upd.AddressType = discoveryv1.AddressTypeIPv6
	check(t, EndpointSliceStrategy{}.ValidateUpdate(ctx, upd, old), "FieldValueInvalid addressType")

	upd = old.DeepCopy()
	upd.Endpoints = append(upd.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0.2"},
		DeprecatedTopology: map[string]string{corev1.LabelHostname: "n1"}})
	EndpointSliceStrategy{}.PrepareForUpdate(ctx, upd, old)
	if upd.Generation != 2 || upd.Endpoints[1].DeprecatedTopology != nil || upd.Endpoints[1].NodeName == nil || *upd.Endpoints[1].NodeName != "n1" {
		t.Fatalf("changed update: %+v", upd)
	}
	check(t, EndpointSliceStrategy{}.ValidateUpdate(ctx, upd, old), "FieldValueInvalid endpoints[0].addresses[0]")

	relabelled := old.DeepCopy()
	relabelled.Labels = map[string]string{"a": "b"}
	EndpointSliceStrategy{}.PrepareForUpdate(ctx, relabelled, old)
	if relabelled.Generation != 2 {
		t.Fatalf("a label change did not bump the generation")
	}
}

func TestEndpointSliceWarnings(t *testing.T) {
	eps := slice(func(e *discoveryv1.EndpointSlice) {
		e.AddressType = discoveryv1.AddressTypeFQDN
	})
	if w := (EndpointSliceStrategy{}).WarningsOnCreate(ctx, eps); len(w) != 1 || !strings.Contains(w[0], "FQDN endpoints are deprecated") {
		t.Errorf("warnings = %v", w)
	}
	ip := slice(func(e *discoveryv1.EndpointSlice) { e.Endpoints[0].Addresses = []string{"010.0.0.1"} })
	if w := (EndpointSliceStrategy{}).WarningsOnUpdate(ctx, ip, ip); len(w) != 1 {
		t.Errorf("ip warnings = %v", w)
	}
	ip.Labels[discoveryv1.LabelManagedBy] = "endpointslice-controller.k8s.io"
	if w := (EndpointSliceStrategy{}).WarningsOnUpdate(ctx, ip, ip); len(w) != 0 {
		t.Errorf("controller slices warned: %v", w)
	}
}
