package networking

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// NetworkPolicyStrategy is the strategy of the networkpolicies resource.
type NetworkPolicyStrategy struct{}

var (
	_ registry.Strategy         = NetworkPolicyStrategy{}
	_ registry.Defaulter        = NetworkPolicyStrategy{}
	_ registry.WarningsOnCreate = NetworkPolicyStrategy{}
	_ registry.WarningsOnUpdate = NetworkPolicyStrategy{}
)

// NamespaceScoped is true.
func (NetworkPolicyStrategy) NamespaceScoped() bool { return true }

// Default sets TCP on ports without a protocol, and the policy types a
// policy without them implies: Ingress, and Egress when it has egress rules.
func (NetworkPolicyStrategy) Default(obj runtime.Object) {
	spec := &obj.(*networkingv1.NetworkPolicy).Spec
	for i := range spec.Ingress {
		defaultPorts(spec.Ingress[i].Ports)
	}
	for i := range spec.Egress {
		defaultPorts(spec.Egress[i].Ports)
	}
	if len(spec.PolicyTypes) == 0 {
		spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(spec.Egress) != 0 {
			spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

func defaultPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			tcp := corev1.ProtocolTCP
			ports[i].Protocol = &tcp
		}
	}
}

// PrepareForCreate starts the generation at 1.
func (NetworkPolicyStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*networkingv1.NetworkPolicy).Generation = 1
}

// PrepareForUpdate bumps the generation when the spec changed.
func (NetworkPolicyStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	np, oldNP := obj.(*networkingv1.NetworkPolicy), old.(*networkingv1.NetworkPolicy)
	if !reflect.DeepEqual(np.Spec, oldNP.Spec) {
		np.Generation = oldNP.Generation + 1
	}
}

// Validate validates a new policy.
func (NetworkPolicyStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateNetworkPolicySpec(&obj.(*networkingv1.NetworkPolicy).Spec, networkPolicyOptions{}, field.NewPath("spec"))
}

// ValidateUpdate validates an updated policy. Label values of an invalid
// pod selector, and any CIDR, that old already had stay accepted.
func (NetworkPolicyStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	oldNP := old.(*networkingv1.NetworkPolicy)
	opts := networkPolicyOptions{
		allowInvalidLabelValue: len(validateSelector(&oldNP.Spec.PodSelector, networkPolicyOptions{}, nil)) > 0,
		validOldCIDRs:          cidrsOf(&oldNP.Spec),
	}
	return ValidateNetworkPolicySpec(&obj.(*networkingv1.NetworkPolicy).Spec, opts, field.NewPath("spec"))
}

// WarningsOnCreate warns about CIDRs in ambiguous forms.
func (NetworkPolicyStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return networkPolicyWarnings(&obj.(*networkingv1.NetworkPolicy).Spec)
}

// WarningsOnUpdate warns about CIDRs in ambiguous forms.
func (NetworkPolicyStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return networkPolicyWarnings(&obj.(*networkingv1.NetworkPolicy).Spec)
}

// peerBlocks calls f with each ipBlock of spec's peers and its path.
func peerBlocks(spec *networkingv1.NetworkPolicySpec, f func(*networkingv1.IPBlock, *field.Path)) {
	specPath := field.NewPath("spec")
	for i, rule := range spec.Ingress {
		for j, peer := range rule.From {
			if peer.IPBlock != nil {
				f(peer.IPBlock, specPath.Child("ingress").Index(i).Child("from").Index(j).Child("ipBlock"))
			}
		}
	}
	for i, rule := range spec.Egress {
		for j, peer := range rule.To {
			if peer.IPBlock != nil {
				f(peer.IPBlock, specPath.Child("egress").Index(i).Child("to").Index(j).Child("ipBlock"))
			}
		}
	}
}

func networkPolicyWarnings(spec *networkingv1.NetworkPolicySpec) []string {
	var warnings []string
	peerBlocks(spec, func(b *networkingv1.IPBlock, p *field.Path) {
		warnings = append(warnings, validation.GetWarningsForCIDR(p.Child("cidr"), b.CIDR)...)
		for k, except := range b.Except {
			warnings = append(warnings, validation.GetWarningsForCIDR(p.Child("except").Index(k), except)...)
		}
	})
	return warnings
}

// cidrsOf returns every CIDR of spec's ipBlocks.
func cidrsOf(spec *networkingv1.NetworkPolicySpec) []string {
	var out []string
	peerBlocks(spec, func(b *networkingv1.IPBlock, _ *field.Path) {
		out = append(out, b.CIDR)
		out = append(out, b.Except...)
	})
	return out
}
