package controlplane

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/discovery"
)

// priorityDiscovery orders discovery.k8s.io in /apis, as kube.
const priorityDiscovery = 16200

// discoveryGroup is discovery.k8s.io/v1.
func (f *storeBuilder) discoveryGroup() (builtGroup, error) {
	specs := []resourceSpec{
		{name: "endpointslices", kind: "EndpointSlice", strategy: discovery.EndpointSliceStrategy{},
			new:     func() runtime.Object { return &discoveryv1.EndpointSlice{} },
			newList: func() runtime.Object { return &discoveryv1.EndpointSliceList{} }},
	}
	return f.buildGroup(discoveryv1.GroupName, priorityDiscovery, discoveryv1.SchemeGroupVersion, specs)
}
