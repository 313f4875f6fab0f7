package networking

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

var tctx = context.Background()

// errFields lists errors as "Type field", sorted.
func errFields(errs field.ErrorList) string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = string(e.Type) + " " + e.Field
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func check(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := errFields(errs); got != strings.Join(want, ", ") {
		t.Errorf("errors = %s\nwant     %s\n(%v)", got, strings.Join(want, ", "), errs)
	}
}

func ingress(mutate func(*networkingv1.IngressSpec)) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "i", Namespace: "ns"}, Spec: networkingv1.IngressSpec{
		Rules: []networkingv1.IngressRule{{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
		}}}},
	}}
	if mutate != nil {
		mutate(&ing.Spec)
	}
	return ing
}

func TestValidateIngress(t *testing.T) {
	path := func(s *networkingv1.IngressSpec) *networkingv1.HTTPIngressPath { return &s.Rules[0].HTTP.Paths[0] }
	tests := []struct {
		name   string
		mutate func(*networkingv1.IngressSpec)
		want   []string
	}{
		{"valid", nil, nil},
		{"nothing to route", func(s *networkingv1.IngressSpec) { s.Rules = nil }, []string{"FieldValueInvalid spec"}},
		{"no path type", func(s *networkingv1.IngressSpec) { path(s).PathType = nil }, []string{"FieldValueRequired spec.rules[0].http.paths[0].pathType"}},
		{"bad path", func(s *networkingv1.IngressSpec) { path(s).Path = "a//b/.." },
			[]string{"FieldValueInvalid spec.rules[0].http.paths[0].path", "FieldValueInvalid spec.rules[0].http.paths[0].path", "FieldValueInvalid spec.rules[0].http.paths[0].path"}},
		{"unknown path type", func(s *networkingv1.IngressSpec) { path(s).PathType = ptr.To[networkingv1.PathType]("Regex") },
			[]string{"FieldValueNotSupported spec.rules[0].http.paths[0].pathType"}},
		{"IP host", func(s *networkingv1.IngressSpec) { s.Rules[0].Host = "1.2.3.4" }, []string{"FieldValueInvalid spec.rules[0].host"}},
		{"wildcard host", func(s *networkingv1.IngressSpec) { s.Rules[0].Host = "*.example.com" }, nil},
		{"no paths", func(s *networkingv1.IngressSpec) { s.Rules[0].HTTP.Paths = nil }, []string{"FieldValueRequired spec.rules[0].http.paths"}},
		{"both backends", func(s *networkingv1.IngressSpec) {
			path(s).Backend.Resource = &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}
		}, []string{"FieldValueInvalid spec.rules[0].http.paths[0].backend"}},
		{"service port", func(s *networkingv1.IngressSpec) { path(s).Backend.Service.Port = networkingv1.ServiceBackendPort{} },
			[]string{"FieldValueRequired spec.rules[0].http.paths[0].backend"}},
		{"service name", func(s *networkingv1.IngressSpec) { path(s).Backend.Service.Name = "Web" },
			[]string{"FieldValueInvalid spec.rules[0].http.paths[0].backend.service.name"}},
		{"digit-leading service name (relaxed)", func(s *networkingv1.IngressSpec) { path(s).Backend.Service.Name = "1web" }, nil},
		{"default backend", func(s *networkingv1.IngressSpec) {
			s.Rules = nil
			s.DefaultBackend = &networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("x_y")}}
		}, []string{"FieldValueInvalid spec.defaultBackend.resource.apiGroup", "FieldValueRequired spec.defaultBackend.resource.kind",
			"FieldValueRequired spec.defaultBackend.resource.name"}},
		{"tls", func(s *networkingv1.IngressSpec) {
			s.TLS = []networkingv1.IngressTLS{{Hosts: []string{"*.a.com", "A_B"}, SecretName: "Bad"}}
		}, []string{"FieldValueInvalid spec.tls[0].hosts[1]", "FieldValueInvalid spec.tls[0].secretName"}},
		{"class name", func(s *networkingv1.IngressSpec) { s.IngressClassName = ptr.To("Nginx") }, []string{"FieldValueInvalid spec.ingressClassName"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, IngressStrategy{}.Validate(tctx, ingress(tt.mutate)), tt.want...)
		})
	}
}

func TestIngressClassAnnotation(t *testing.T) {
	ing := ingress(nil)
	ing.Annotations = map[string]string{ingressClassAnnotation: "nginx"}
	if w := (IngressStrategy{}).WarningsOnCreate(tctx, ing); len(w) != 1 || !strings.Contains(w[0], "deprecated") {
		t.Errorf("warnings = %v", w)
	}
	ing.Spec.IngressClassName = ptr.To("other")
	check(t, IngressStrategy{}.Validate(tctx, ing), "FieldValueInvalid annotations.kubernetes.io/ingress.class")
}

func TestIngressUpdateAndStatus(t *testing.T) {
	old := ingress(func(s *networkingv1.IngressSpec) { s.TLS = []networkingv1.IngressTLS{{SecretName: "Bad"}} })
	old.Generation = 1
	upd := old.DeepCopy()
	upd.Spec.Rules[0].Host = "b.example.com"
	upd.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "1.2.3.4"}}
	IngressStrategy{}.PrepareForUpdate(tctx, upd, old)
	if upd.Generation != 2 || len(upd.Status.LoadBalancer.Ingress) != 0 {
		t.Fatalf("update: generation %d status %+v", upd.Generation, upd.Status)
	}
	// The invalid secret name was already there.
	check(t, IngressStrategy{}.ValidateUpdate(tctx, upd, old))

	st := old.DeepCopy()
	st.Spec.Rules = nil
	st.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "1.2.3.04"}, {Hostname: "10.0.0.1"}}
	IngressStatusStrategy{}.PrepareForUpdate(tctx, st, old)
	if len(st.Spec.Rules) != 1 {
		t.Fatal("status update changed the spec")
	}
	check(t, IngressStatusStrategy{}.ValidateUpdate(tctx, st, old),
		"FieldValueInvalid status.loadBalancer.ingress[0].ip", "FieldValueInvalid status.loadBalancer.ingress[1].hostname")
}

func TestIngressClass(t *testing.T) {
	c := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: networkingv1.IngressClassSpec{
		Controller: "example.com/ingress", Parameters: &networkingv1.IngressClassParametersReference{Kind: "Params", Name: "p"}}}
	IngressClassStrategy{}.Default(c)
	if *c.Spec.Parameters.Scope != "Cluster" {
		t.Fatalf("scope = %v", c.Spec.Parameters.Scope)
	}
	check(t, IngressClassStrategy{}.Validate(tctx, c))
	bad := c.DeepCopy()
	bad.Spec.Controller = "nginx"
	bad.Spec.Parameters.Namespace = ptr.To("ns")
	check(t, IngressClassStrategy{}.ValidateUpdate(tctx, bad, c),
		"FieldValueInvalid spec.controller", "FieldValueInvalid spec.controller", "FieldValueForbidden spec.parameters.namespace")
	bad.Spec.Controller = c.Spec.Controller
	bad.Spec.Parameters.Scope = ptr.To("Namespace")
	bad.Spec.Parameters.Namespace = nil
	check(t, IngressClassStrategy{}.ValidateUpdate(tctx, bad, c), "FieldValueRequired spec.parameters.namespace")
}

func TestNetworkPolicy(t *testing.T) {
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "ns"}, Spec: networkingv1.NetworkPolicySpec{
		Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(80))}}}},
		Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{
			CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}}}}},
	}}
	NetworkPolicyStrategy{}.Default(np)
	if *np.Spec.Ingress[0].Ports[0].Protocol != corev1.ProtocolTCP || !slices.Equal(np.Spec.PolicyTypes,
		[]networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
		t.Fatalf("defaults: %+v", np.Spec)
	}
	check(t, NetworkPolicyStrategy{}.Validate(tctx, np))

	bad := np.DeepCopy()
	bad.Spec.Ingress[0].Ports = []networkingv1.NetworkPolicyPort{
		{Protocol: ptr.To[corev1.Protocol]("ICMP"), Port: ptr.To(intstr.FromString("http")), EndPort: ptr.To[int32](90)},
		{Port: ptr.To(intstr.FromInt32(100)), EndPort: ptr.To[int32](90)},
	}
	bad.Spec.Egress[0].To = []networkingv1.NetworkPolicyPeer{{}, {IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"11.0.0.0/16"}},
		PodSelector: &metav1.LabelSelector{}}}
	bad.Spec.PolicyTypes = []networkingv1.PolicyType{"Sideways"}
	check(t, NetworkPolicyStrategy{}.Validate(tctx, bad),
		"FieldValueNotSupported spec.ingress[0].ports[0].protocol", "FieldValueInvalid spec.ingress[0].ports[0].endPort",
		"FieldValueInvalid spec.ingress[0].ports[1].endPort", "FieldValueRequired spec.egress[0].to[0]",
		"FieldValueInvalid spec.egress[0].to[1].ipBlock.except[0]", "FieldValueForbidden spec.egress[0].to[1]",
		"FieldValueNotSupported spec.policyTypes[0]")

	// A CIDR old already had is accepted; a new non-canonical one is not.
	old := np.DeepCopy()
	old.Spec.Egress[0].To[0].IPBlock.CIDR = "10.0.0.1/8"
	check(t, NetworkPolicyStrategy{}.ValidateUpdate(tctx, old.DeepCopy(), old))
	check(t, NetworkPolicyStrategy{}.ValidateUpdate(tctx, old.DeepCopy(), np), "FieldValueInvalid spec.egress[0].to[0].ipBlock.cidr")
	// The ambiguous CIDR is kept, with kube's warning; canonical ones warn of nothing.
	want := `spec.egress[0].to[0].ipBlock.cidr: CIDR value "10.0.0.1/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.1/32"?)`
	for name, w := range map[string][]string{
		"create": NetworkPolicyStrategy{}.WarningsOnCreate(tctx, old),
		"update": NetworkPolicyStrategy{}.WarningsOnUpdate(tctx, old, np),
	} {
		if len(w) != 1 || w[0] != want {
			t.Errorf("warnings on %s = %q, want %q", name, w, want)
		}
	}
	if w := (NetworkPolicyStrategy{}).WarningsOnCreate(tctx, np); len(w) != 0 {
		t.Errorf("warnings of canonical CIDRs = %q", w)
	}
}
