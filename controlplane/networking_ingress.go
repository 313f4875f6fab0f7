package controlplane

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/networking"
)

// ingressSpecs are the ingress and network policy resources of
// networking.k8s.io/v1. Ingresses are stored under kube's singular key.
func ingressSpecs() []resourceSpec {
	return []resourceSpec{
		{name: "ingresses", kind: "Ingress", keyPrefix: "/ingress", strategy: networking.IngressStrategy{},
			status: networking.IngressStatusStrategy{}, shortNames: []string{"ing"},
			new: func() runtime.Object { return &networkingv1.Ingress{} }, newList: func() runtime.Object { return &networkingv1.IngressList{} }},
		{name: "ingressclasses", kind: "IngressClass", strategy: networking.IngressClassStrategy{},
			new:     func() runtime.Object { return &networkingv1.IngressClass{} },
			newList: func() runtime.Object { return &networkingv1.IngressClassList{} }},
		{name: "networkpolicies", kind: "NetworkPolicy", strategy: networking.NetworkPolicyStrategy{}, shortNames: []string{"netpol"},
			new:     func() runtime.Object { return &networkingv1.NetworkPolicy{} },
			newList: func() runtime.Object { return &networkingv1.NetworkPolicyList{} }},
	}
}
