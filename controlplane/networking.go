package controlplane

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/networking"
)

// priorityNetworking orders networking.k8s.io in /apis, as kube.
const priorityNetworking = 17200

// networkingSpecs are the resources of networking.k8s.io/v1.
func networkingSpecs() []resourceSpec {
	return []resourceSpec{
		{name: "servicecidrs", kind: "ServiceCIDR", strategy: networking.ServiceCIDRStrategy{},
			status: networking.ServiceCIDRStatusStrategy{},
			new:    func() runtime.Object { return &networkingv1.ServiceCIDR{} }, newList: func() runtime.Object { return &networkingv1.ServiceCIDRList{} }},
		{name: "ipaddresses", kind: "IPAddress", strategy: networking.IPAddressStrategy{}, shortNames: []string{"ip"},
			new: func() runtime.Object { return &networkingv1.IPAddress{} }, newList: func() runtime.Object { return &networkingv1.IPAddressList{} }},
	}
}

// networkingGroup is networking.k8s.io/v1.
func (f *storeBuilder) networkingGroup() (builtGroup, error) {
	return f.buildGroup(networkingv1.GroupName, priorityNetworking, networkingv1.SchemeGroupVersion, append(networkingSpecs(), ingressSpecs()...))
}
