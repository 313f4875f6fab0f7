package resource

import (
	"fmt"
	"regexp"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
)

// attributeKeyLength is the longest attribute or capacity name: a domain,
// a slash and an identifier.
const attributeKeyLength = resourcev1.DeviceMaxDomainLength + 1 + resourcev1.DeviceMaxIDLength

// validateSliceSpec is kube's check of a ResourceSlice: driver and pool,
// exactly one way of choosing nodes, devices or shared counters (not both),
// and the per-slice and per-device limits. old is nil on create; the
// driver, pool name and node name never change.
func validateSliceSpec(spec, old *resourcev1.ResourceSliceSpec) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateDriverName(spec.Driver, path.Child("driver"))
	errs = append(errs, validatePoolName(spec.Pool.Name, path.Child("pool", "name"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(path.Child("pool", "resourceSliceCount"), spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if spec.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(path.Child("pool", "generation"), spec.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		errs = append(errs, apivalidation.ValidateImmutableField(spec.Pool.Name, old.Pool.Name, path.Child("pool", "name"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(spec.Driver, old.Driver, path.Child("driver"))...)
		errs = append(errs, apivalidation.ValidateImmutableField(spec.NodeName, old.NodeName, path.Child("nodeName"))...)
	}
	errs = append(errs, validateSliceNodes(spec, path)...)
	if spec.SharedCounters != nil && spec.Devices != nil {
		errs = append(errs, field.Invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	maxDevices := resourcev1.ResourceSliceMaxDevices
	if advancedDevices(spec) {
		maxDevices = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
	}
	errs = append(errs, setOf(spec.Devices, maxDevices, path.Child("devices"), func(d resourcev1.Device, path *field.Path) field.ErrorList {
		return validateDevice(d, oldDevice(old, d.Name), path, spec.PerDeviceNodeSelection)
	}, func(d resourcev1.Device) string { return d.Name })...)
	return append(errs, setOf(spec.SharedCounters, resourcev1.ResourceSliceMaxCounterSets, path.Child("sharedCounters"), validateCounterSet,
		func(c resourcev1.CounterSet) string { return c.Name })...)
}

// validateSliceNodes requires exactly one of nodeName, nodeSelector,
// allNodes and perDeviceNodeSelection.
func validateSliceNodes(spec *resourcev1.ResourceSliceSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName == "" {
			errs = append(errs, field.Invalid(path.Child("nodeName"), *spec.NodeName, "must be either unset or set to a non-empty string"))
		} else {
			set = append(set, "`nodeName`")
			errs = append(errs, validateNodeName(*spec.NodeName, path.Child("nodeName"))...)
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, core.ValidateNodeSelector(spec.NodeSelector, path.Child("nodeSelector"))...)
		if len(spec.NodeSelector.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(path.Child("nodeSelector", "nodeSelectorTerms"), spec.NodeSelector.NodeSelectorTerms,
				"must have exactly one node selector term"))
		}
	}
	for _, b := range []struct {
		v    *bool
		name string
	}{{spec.AllNodes, "allNodes"}, {spec.PerDeviceNodeSelection, "perDeviceNodeSelection"}} {
		if b.v == nil {
			continue
		}
		if *b.v {
			set = append(set, "`"+b.name+"`")
		} else {
			errs = append(errs, field.Invalid(path.Child(b.name), *b.v, "must be either unset or set to true"))
		}
	}
	const which = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(path, which))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, fmt.Sprintf("{%s}", strings.Join(set, ", ")), which+", but multiple fields are set"))
	}
	return errs
}

// advancedDevices reports whether a slice uses taints or counters, which
// lower its bound on devices.
func advancedDevices(spec *resourcev1.ResourceSliceSpec) bool {
	for _, d := range spec.Devices {
		if len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 {
			return true
		}
	}
	return false
}

func oldDevice(old *resourcev1.ResourceSliceSpec, name string) *resourcev1.Device {
	if old == nil {
		return nil
	}
	for i := range old.Devices {
		if old.Devices[i].Name == name {
			return &old.Devices[i]
		}
	}
	return nil
}

func validateCounterSet(c resourcev1.CounterSet, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		errs = append(errs, validateCounter(c.Name, path.Child("name"))...)
	}
	if len(c.Counters) == 0 {
		return append(errs, field.Required(path.Child("counters"), ""))
	}
	return append(errs, mapOf(c.Counters, resourcev1.ResourceSliceMaxCountersPerCounterSet, validation.DNS1123LabelMaxLength,
		path.Child("counters"), validateCounterKey, noCheck[resourcev1.Counter])...)
}

func validateCounterKey(k string, path *field.Path) field.ErrorList { return validateCounter(k, path) }

func noCheck[T any](T, *field.Path) field.ErrorList { return nil }

// validateDevice checks one device: its name, the number of its attributes
// and capacities, each of them, its taints, counters, node choice and
// binding conditions. What is unchanged from old is not checked again.
func validateDevice(d resourcev1.Device, old *resourcev1.Device, path *field.Path, perDeviceNodes *bool) field.ErrorList {
	errs := validateDeviceName(d.Name, path.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		errs = append(errs, field.Invalid(path, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d",
			resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	errs = append(errs, mapOf(d.Attributes, -1, attributeKeyLength, path.Child("attributes"), validateQualifiedName, validateAttribute)...)
	if old == nil || !apiequality.Semantic.DeepEqual(old.Capacity, d.Capacity) {
		multiple := d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
		errs = append(errs, mapOf(d.Capacity, -1, attributeKeyLength, path.Child("capacity"), validateQualifiedName,
			func(c resourcev1.DeviceCapacity, path *field.Path) field.ErrorList {
				if c.RequestPolicy != nil && !multiple {
					return field.ErrorList{field.Forbidden(path.Child("requestPolicy"), "allowMultipleAllocations must be true")}
				}
				return nil
			})...)
	}
	if old == nil || !apiequality.Semantic.DeepEqual(old.Taints, d.Taints) {
		errs = append(errs, eachOf(d.Taints, resourcev1.DeviceTaintsMaxLength, path.Child("taints"),
			func(t resourcev1.DeviceTaint, path *field.Path) field.ErrorList { return validateTaint(t, nil, path) })...)
	}
	errs = append(errs, setOf(d.ConsumesCounters, resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice, path.Child("consumesCounters"),
		validateCounterConsumption, func(c resourcev1.DeviceCounterConsumption) string { return c.CounterSet })...)
	errs = append(errs, validateDeviceNodes(d, path, perDeviceNodes != nil && *perDeviceNodes)...)
	return append(errs, validateBindingConditions(d.BindingConditions, d.BindingFailureConditions, path)...)
}

func validateCounterConsumption(c resourcev1.DeviceCounterConsumption, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.CounterSet == "" {
		errs = append(errs, field.Required(path.Child("counterSet"), ""))
	} else {
		errs = append(errs, validateCounter(c.CounterSet, path.Child("counterSet"))...)
	}
	if len(c.Counters) == 0 {
		return append(errs, field.Required(path.Child("counters"), ""))
	}
	return append(errs, mapOf(c.Counters, resourcev1.ResourceSliceMaxCountersPerDeviceCounterConsumption, validation.DNS1123LabelMaxLength,
		path.Child("counters"), validateCounterKey, noCheck[resourcev1.Counter])...)
}

// validateDeviceNodes requires exactly one node choice per device when the
// slice chooses per device, and none otherwise.
func validateDeviceNodes(d resourcev1.Device, path *field.Path, perDevice bool) field.ErrorList {
	if !perDevice {
		if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
			return field.ErrorList{field.Invalid(path, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec")}
		}
		return nil
	}
	var errs field.ErrorList
	var set []string
	if d.NodeName != nil {
		if *d.NodeName == "" {
			errs = append(errs, field.Invalid(path.Child("nodeName"), *d.NodeName, "must not be empty"))
		} else {
			set = append(set, "`nodeName`")
			errs = append(errs, validateNodeName(*d.NodeName, path.Child("nodeName"))...)
		}
	}
	if d.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, core.ValidateNodeSelector(d.NodeSelector, path.Child("nodeSelector"))...)
	}
	if d.AllNodes != nil {
		if *d.AllNodes {
			set = append(set, "`allNodes`")
		} else {
			errs = append(errs, field.Invalid(path.Child("allNodes"), *d.AllNodes, "must be either unset or set to true"))
		}
	}
	const which = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(path, which))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, fmt.Sprintf("{%s}", strings.Join(set, ", ")), which))
	}
	return errs
}

// semver is semver.org 2.0.0's version syntax.
var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// validateAttribute requires exactly one value, bounded in length, a
// version in semver form. The list forms are an alpha feature that v1.37
// has off, so they are dropped before validation.
func validateAttribute(a resourcev1.DeviceAttribute, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if a.BoolValue != nil {
		n++
	}
	if a.IntValue != nil {
		n++
	}
	if a.StringValue != nil {
		n++
		if len(*a.StringValue) > resourcev1.DeviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(path.Child("string"), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	if v := a.VersionValue; v != nil {
		n++
		if !semver.MatchString(*v) {
			errs = append(errs, field.Invalid(path.Child("version"), *v, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(*v) > resourcev1.DeviceAttributeMaxValueLength {
			errs = append(errs, field.TooLong(path.Child("version"), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	switch n {
	case 0:
		errs = append(errs, field.Invalid(path, "", "exactly one value must be specified"))
	case 1:
	default:
		errs = append(errs, field.Invalid(path, a, "exactly one value must be specified"))
	}
	return errs
}
