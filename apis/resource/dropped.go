package resource

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	resourcev1 "k8s.io/api/resource/v1"
)

func apiequalitySemantic(a, b any) bool { return apiequality.Semantic.DeepEqual(a, b) }

// dropSliceAlphaFields clears the fields of alpha features kube v1.37 has
// off by default (DRAPartitionableDevicesType, DRAOptionalNodeOperations,
// DRANodeAllocatableResources, DRAListTypeAttributes), as kube drops them
// on write, unless old (nil on create) uses them already.
func dropSliceAlphaFields(spec, old *resourcev1.ResourceSliceSpec) {
	if old == nil || old.PartitionTypeAttribute == nil {
		spec.PartitionTypeAttribute = nil
	}
	if old == nil || len(old.SkipNodeOperations) == 0 {
		spec.SkipNodeOperations = nil
	}
	if !sliceUses(old, func(d *resourcev1.Device) bool { return len(d.NodeAllocatableResources) > 0 }) {
		for i := range spec.Devices {
			spec.Devices[i].NodeAllocatableResources = nil
		}
	}
	if !sliceUses(old, hasListAttribute) {
		for i := range spec.Devices {
			for name, a := range spec.Devices[i].Attributes {
				a.BoolValues, a.IntValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
				spec.Devices[i].Attributes[name] = a
			}
		}
	}
}

func sliceUses(spec *resourcev1.ResourceSliceSpec, uses func(*resourcev1.Device) bool) bool {
	if spec == nil {
		return false
	}
	for i := range spec.Devices {
		if uses(&spec.Devices[i]) {
			return true
		}
	}
	return false
}

func hasListAttribute(d *resourcev1.Device) bool {
	for _, a := range d.Attributes {
		if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
			return true
		}
	}
	return false
}

// dropClaimAlphaFields clears derived attributes (DRADerivedAttributes,
// alpha and off in v1.37) of a claim spec, unless old uses them already.
func dropClaimAlphaFields(spec, old *resourcev1.ResourceClaimSpec) {
	if old != nil && claimUsesDerived(old) {
		return
	}
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			r.Exactly.DerivedAttributes = nil
		}
		for j := range r.FirstAvailable {
			r.FirstAvailable[j].DerivedAttributes = nil
		}
	}
}

func claimUsesDerived(spec *resourcev1.ResourceClaimSpec) bool {
	for _, r := range spec.Devices.Requests {
		if r.Exactly != nil && len(r.Exactly.DerivedAttributes) > 0 {
			return true
		}
		for _, s := range r.FirstAvailable {
			if len(s.DerivedAttributes) > 0 {
				return true
			}
		}
	}
	return false
}

// dropClaimStatusAlphaFields clears the skipped node operations of
// allocation results (DRAOptionalNodeOperations, off in v1.37) unless the
// old status has them.
func dropClaimStatusAlphaFields(status, old *resourcev1.ResourceClaimStatus) {
	uses := func(s *resourcev1.ResourceClaimStatus) bool {
		if s == nil || s.Allocation == nil {
			return false
		}
		for _, r := range s.Allocation.Devices.Results {
			if len(r.SkipNodeOperations) > 0 {
				return true
			}
		}
		return false
	}
	if status.Allocation == nil || uses(old) {
		return
	}
	for i := range status.Allocation.Devices.Results {
		status.Allocation.Devices.Results[i].SkipNodeOperations = nil
	}
}

// dropDeallocatedDevices removes the statuses of devices that the update
// deallocated.
func dropDeallocatedDevices(status, old *resourcev1.ResourceClaimStatus) {
	gone := map[string]bool{}
	if old.Allocation != nil {
		for _, r := range old.Allocation.Devices.Results {
			gone[deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID))] = true
		}
	}
	if status.Allocation != nil {
		for _, r := range status.Allocation.Devices.Results {
			delete(gone, deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID)))
		}
	}
	kept := status.Devices[:0]
	for _, d := range status.Devices {
		if !gone[deviceID(d.Driver, d.Pool, d.Device, d.ShareID)] {
			kept = append(kept, d)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	status.Devices = kept
}
