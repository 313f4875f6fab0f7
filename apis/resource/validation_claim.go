package resource

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
)

// requestNames maps each request of a claim to its subrequests (nil for a
// request without firstAvailable).
type requestNames map[string]map[string]bool

func requestNamesOf(c *resourcev1.DeviceClaim) requestNames {
	out := requestNames{}
	for _, r := range c.Requests {
		var subs map[string]bool
		if len(r.FirstAvailable) > 0 {
			subs = map[string]bool{}
			for _, s := range r.FirstAvailable {
				subs[s.Name] = true
			}
		}
		out[r.Name] = subs
	}
	return out
}

// has accepts "request" and "request/subrequest".
func (r requestNames) has(name string) bool {
	req, sub, isSub := strings.Cut(name, "/")
	subs, ok := r[req]
	if !ok || strings.Contains(sub, "/") {
		return false
	}
	return !isSub || subs[sub]
}

// validateClaimSpec is kube's check of a claim's devices: at most 32
// requests, each with exactly one of exactly and firstAvailable, and at
// most 32 constraints and configurations naming those requests.
func validateClaimSpec(spec *resourcev1.ResourceClaimSpec, path *field.Path) field.ErrorList {
	d := &spec.Devices
	path = path.Child("devices")
	names := requestNamesOf(d)
	errs := setOf(d.Requests, resourcev1.DeviceRequestsMaxSize, path.Child("requests"), validateRequest,
		func(r resourcev1.DeviceRequest) string { return r.Name })
	errs = append(errs, eachOf(d.Constraints, resourcev1.DeviceConstraintsMaxSize, path.Child("constraints"),
		func(c resourcev1.DeviceConstraint, path *field.Path) field.ErrorList {
			return validateConstraint(c, path, names)
		})...)
	errs = append(errs, eachOf(d.Config, resourcev1.DeviceConfigMaxSize, path.Child("config"),
		func(c resourcev1.DeviceClaimConfiguration, path *field.Path) field.ErrorList {
			errs := validateRequestRefs(c.Requests, path.Child("requests"), names)
			return append(errs, validateOpaqueConfig(c.Opaque, path.Child("opaque"), false)...)
		})...)
	return errs
}

func validateRequest(r resourcev1.DeviceRequest, path *field.Path) field.ErrorList {
	errs := dnsLabel(r.Name, path.Child("name"))
	switch {
	case r.Exactly == nil && len(r.FirstAvailable) == 0:
		errs = append(errs, field.Required(path, "exactly one of `exactly` or `firstAvailable` is required"))
	case r.Exactly != nil && len(r.FirstAvailable) > 0:
		errs = append(errs, field.Invalid(path, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case r.Exactly != nil:
		e := r.Exactly
		errs = append(errs, validateDeviceRequestParts(e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, e.Tolerations, path.Child("exactly"))...)
	default:
		errs = append(errs, setOf(r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize, path.Child("firstAvailable"),
			func(s resourcev1.DeviceSubRequest, path *field.Path) field.ErrorList {
				errs := dnsLabel(s.Name, path.Child("name"))
				return append(errs, validateDeviceRequestParts(s.DeviceClassName, s.Selectors, s.AllocationMode, s.Count, s.Tolerations, path)...)
			}, func(s resourcev1.DeviceSubRequest) string { return s.Name })...)
	}
	return errs
}

// validateDeviceRequestParts checks what a request and a subrequest share:
// the class, selectors, allocation mode and count, and tolerations.
func validateDeviceRequestParts(class string, selectors []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode,
	count int64, tolerations []resourcev1.DeviceToleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if class == "" {
		errs = append(errs, field.Required(path.Child("deviceClassName"), ""))
	} else {
		errs = append(errs, dnsSubdomain(class, path.Child("deviceClassName"))...)
	}
	errs = append(errs, validateSelectors(selectors, path.Child("selectors"), false)...)
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			errs = append(errs, field.Invalid(path.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode)))
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			errs = append(errs, field.Invalid(path.Child("count"), count, "must be greater than zero"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("allocationMode"), mode,
			[]resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}))
	}
	for i, t := range tolerations {
		errs = append(errs, validateToleration(t, path.Child("tolerations").Index(i))...)
	}
	return errs
}

func validateConstraint(c resourcev1.DeviceConstraint, path *field.Path, names requestNames) field.ErrorList {
	errs := validateRequestRefs(c.Requests, path.Child("requests"), names)
	switch {
	case c.MatchAttribute != nil:
		errs = append(errs, validateFullyQualifiedName(*c.MatchAttribute, path.Child("matchAttribute"))...)
	case c.DistinctAttribute != nil:
		errs = append(errs, validateFullyQualifiedName(*c.DistinctAttribute, path.Child("distinctAttribute"))...)
	default:
		// kube's message, with DRAConsumableCapacity on as in v1.37.
		errs = append(errs, field.Required(path, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	}
	return errs
}

func validateRequestRefs(refs []string, path *field.Path, names requestNames) field.ErrorList {
	return setOf(refs, resourcev1.DeviceRequestsMaxSize, path, func(name string, path *field.Path) field.ErrorList {
		return validateRequestRef(name, path, names)
	}, self)
}

// validateRequestRef requires the name of a request of the claim, or of a
// request and its subrequest separated by "/".
func validateRequestRef(name string, path *field.Path, names requestNames) field.ErrorList {
	const msg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
	segments := strings.Split(name, "/")
	if len(segments) > 2 {
		return field.ErrorList{field.Invalid(path, name, msg)}
	}
	var errs field.ErrorList
	for _, s := range segments {
		errs = append(errs, dnsLabel(s, path)...)
	}
	if !names.has(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validateClaimStatus is kube's status rule: bounded unique consumers
// only while allocated (none added while the claim is being deleted), an
// allocation that never changes once made, and device statuses only of
// allocated devices.
func validateClaimStatus(claim, old *resourcev1.ResourceClaim) field.ErrorList {
	s, oldS := &claim.Status, &old.Status
	path := field.NewPath("status")
	errs := setOf(s.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize, path.Child("reservedFor"), validateConsumer,
		func(c resourcev1.ResourceClaimConsumerReference) types.UID { return c.UID })
	allocated := map[string]bool{}
	if s.Allocation != nil {
		for _, r := range s.Allocation.Devices.Results {
			allocated[deviceID(r.Driver, r.Pool, r.Device, (*string)(r.ShareID))] = true
		}
	}
	errs = append(errs, setOf(s.Devices, -1, path.Child("devices"),
		func(d resourcev1.AllocatedDeviceStatus, path *field.Path) field.ErrorList {
			return validateDeviceStatus(d, path, allocated)
		},
		func(d resourcev1.AllocatedDeviceStatus) string {
			return deviceID(d.Driver, d.Pool, d.Device, d.ShareID)
		})...)
	if len(s.ReservedFor) > 0 && s.Allocation == nil {
		errs = append(errs, field.Forbidden(path.Child("reservedFor"), "may not be specified when `allocated` is not set"))
	} else if len(s.ReservedFor) > 0 && claim.DeletionTimestamp != nil {
		known := map[resourcev1.ResourceClaimConsumerReference]bool{}
		for _, c := range oldS.ReservedFor {
			known[c] = true
		}
		for _, c := range s.ReservedFor {
			if !known[c] {
				errs = append(errs, field.Forbidden(path.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
				break
			}
		}
	}
	switch {
	case oldS.Allocation != nil && s.Allocation != nil:
		errs = append(errs, apivalidation.ValidateImmutableField(s.Allocation, oldS.Allocation, path.Child("allocation"))...)
	case s.Allocation != nil:
		errs = append(errs, validateAllocation(s.Allocation, path.Child("allocation"), requestNamesOf(&claim.Spec.Devices))...)
	}
	return errs
}

func deviceID(driver, pool, device string, shareID *string) string {
	id := driver + "/" + pool + "/" + device
	if shareID != nil {
		id += "/" + *shareID
	}
	return id
}

func validateConsumer(c resourcev1.ResourceClaimConsumerReference, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Resource == "" {
		errs = append(errs, field.Required(path.Child("resource"), ""))
	}
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	if c.UID == "" {
		errs = append(errs, field.Required(path.Child("uid"), ""))
	}
	return errs
}

func validateAllocation(a *resourcev1.AllocationResult, path *field.Path, names requestNames) field.ErrorList {
	devices := path.Child("devices")
	errs := eachOf(a.Devices.Results, resourcev1.AllocationResultsMaxSize, devices.Child("results"),
		func(r resourcev1.DeviceRequestAllocationResult, path *field.Path) field.ErrorList {
			errs := validateRequestRef(r.Request, path.Child("request"), names)
			errs = append(errs, validateDriverName(r.Driver, path.Child("driver"))...)
			errs = append(errs, validatePoolName(r.Pool, path.Child("pool"))...)
			errs = append(errs, validateDeviceName(r.Device, path.Child("device"))...)
			errs = append(errs, validateBindingConditions(r.BindingConditions, r.BindingFailureConditions, path)...)
			for i, t := range r.Tolerations {
				errs = append(errs, validateToleration(t, path.Child("tolerations").Index(i))...)
			}
			if r.ShareID != nil {
				errs = append(errs, validateUID(string(*r.ShareID), path.Child("shareID"))...)
			}
			return errs
		})
	errs = append(errs, eachOf(a.Devices.Config, 2*resourcev1.DeviceConfigMaxSize, devices.Child("config"),
		func(c resourcev1.DeviceAllocationConfiguration, path *field.Path) field.ErrorList {
			var errs field.ErrorList
			switch c.Source {
			case "":
				errs = append(errs, field.Required(path.Child("source"), ""))
			case resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass:
			default:
				errs = append(errs, field.NotSupported(path.Child("source"), c.Source,
					[]resourcev1.AllocationConfigSource{resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass}))
			}
			errs = append(errs, validateRequestRefs(c.Requests, path.Child("requests"), names)...)
			return append(errs, validateOpaqueConfig(c.Opaque, path.Child("opaque"), false)...)
		})...)
	if a.NodeSelector != nil {
		errs = append(errs, core.ValidateNodeSelector(a.NodeSelector, path.Child("nodeSelector"))...)
	}
	return errs
}

// validateUID requires an RFC 4122 UUID in its lower-case form.
func validateUID(uid string, path *field.Path) field.ErrorList {
	if !uuidForm(uid) {
		return field.ErrorList{field.Invalid(path, uid, "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters")}
	}
	return nil
}

func uuidForm(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f'):
			return false
		}
	}
	return true
}

func validateDeviceStatus(d resourcev1.AllocatedDeviceStatus, path *field.Path, allocated map[string]bool) field.ErrorList {
	errs := validateDriverName(d.Driver, path.Child("driver"))
	errs = append(errs, validatePoolName(d.Pool, path.Child("pool"))...)
	errs = append(errs, validateDeviceName(d.Device, path.Child("device"))...)
	if d.ShareID != nil {
		errs = append(errs, validateUID(*d.ShareID, path.Child("shareID"))...)
	}
	if id := deviceID(d.Driver, d.Pool, d.Device, d.ShareID); !allocated[id] {
		errs = append(errs, field.Invalid(path, id, "must be an allocated device in the claim"))
	}
	if len(d.Conditions) > resourcev1.AllocatedDeviceStatusMaxConditions {
		errs = append(errs, field.TooMany(path.Child("conditions"), len(d.Conditions), resourcev1.AllocatedDeviceStatusMaxConditions))
	}
	errs = append(errs, metavalidation.ValidateConditions(d.Conditions, path.Child("conditions"))...)
	if d.Data != nil && len(d.Data.Raw) > 0 {
		errs = append(errs, validateRawExtension(*d.Data, path.Child("data"), false, resourcev1.AllocatedDeviceStatusDataMaxLength)...)
	}
	if n := d.NetworkData; n != nil {
		np := path.Child("networkData")
		if len(n.InterfaceName) > resourcev1.NetworkDeviceDataInterfaceNameMaxLength {
			errs = append(errs, field.TooLong(np.Child("interfaceName"), "", resourcev1.NetworkDeviceDataInterfaceNameMaxLength))
		}
		if len(n.HardwareAddress) > resourcev1.NetworkDeviceDataHardwareAddressMaxLength {
			errs = append(errs, field.TooLong(np.Child("hardwareAddress"), "", resourcev1.NetworkDeviceDataHardwareAddressMaxLength))
		}
		errs = append(errs, setOf(n.IPs, resourcev1.NetworkDeviceDataMaxIPs, np.Child("ips"), func(ip string, p *field.Path) field.ErrorList {
			return validation.IsValidInterfaceAddress(p, ip)
		}, self)...)
	}
	return errs
}

// validateExtendedResourceName requires an extended resource's name, when
// a class names one.
func validateExtendedResourceName(name *string, path *field.Path) field.ErrorList {
	if name != nil && !core.IsExtendedResourceName(corev1.ResourceName(*name)) {
		return field.ErrorList{field.Invalid(path, *name, "must be a valid extended resource name")}
	}
	return nil
}
