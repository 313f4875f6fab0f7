package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry"
)

var (
	_ registry.Defaulter = ResourceClaimStrategy{}
	_ registry.Defaulter = ResourceClaimTemplateStrategy{}
)

// Default sets kube's defaults of a claim: a request for devices of one
// kind (and each alternative of firstAvailable) asks for exactly one
// unless it says otherwise, and tolerations without an operator compare
// for equality.
func (ResourceClaimStrategy) Default(obj runtime.Object) {
	c := obj.(*resourcev1.ResourceClaim)
	defaultRequests(c.Spec.Devices.Requests)
	if c.Status.Allocation != nil {
		for i := range c.Status.Allocation.Devices.Results {
			defaultTolerations(c.Status.Allocation.Devices.Results[i].Tolerations)
		}
	}
}

// Default sets the defaults of the template's claim spec.
func (ResourceClaimTemplateStrategy) Default(obj runtime.Object) {
	defaultRequests(obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec.Devices.Requests)
}

func defaultRequests(requests []resourcev1.DeviceRequest) {
	for i := range requests {
		r := &requests[i]
		if x := r.Exactly; x != nil {
			x.AllocationMode, x.Count = defaultCount(x.AllocationMode, x.Count)
			defaultTolerations(x.Tolerations)
		}
		for j := range r.FirstAvailable {
			s := &r.FirstAvailable[j]
			s.AllocationMode, s.Count = defaultCount(s.AllocationMode, s.Count)
			defaultTolerations(s.Tolerations)
		}
	}
}

// defaultCount is ExactCount of one when a request says neither.
func defaultCount(mode resourcev1.DeviceAllocationMode, count int64) (resourcev1.DeviceAllocationMode, int64) {
	if mode == "" {
		mode = resourcev1.DeviceAllocationModeExactCount
	}
	if mode == resourcev1.DeviceAllocationModeExactCount && count == 0 {
		count = 1
	}
	return mode, count
}

func defaultTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}
