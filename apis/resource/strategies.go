package resource

import (
	"context"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

var (
	_ registry.Strategy        = DeviceClassStrategy{}
	_ registry.Strategy        = ResourceSliceStrategy{}
	_ registry.FieldSelectable = ResourceSliceStrategy{}
	_ registry.Strategy        = DeviceTaintRuleStrategy{}
	_ registry.Strategy        = DeviceTaintRuleStatusStrategy{}
)

// DeviceClassStrategy is the strategy of the cluster-scoped deviceclasses
// resource; generation counts spec changes from 1.
type DeviceClassStrategy struct{}

// NamespaceScoped is false.
func (DeviceClassStrategy) NamespaceScoped() bool { return false }

// PrepareForCreate starts the generation at 1.
func (DeviceClassStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*resourcev1.DeviceClass).Generation = 1
}

// PrepareForUpdate counts a spec change.
func (DeviceClassStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, oldC := obj.(*resourcev1.DeviceClass), old.(*resourcev1.DeviceClass)
	registry.CountSpecChange(c, oldC, &c.Spec, &oldC.Spec)
}

// Validate validates a new class.
func (DeviceClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateDeviceClass(obj.(*resourcev1.DeviceClass), nil)
}

// ValidateUpdate validates the class; unchanged selectors and
// configurations count as stored and are not compiled or bounded again.
func (DeviceClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateDeviceClass(obj.(*resourcev1.DeviceClass), &old.(*resourcev1.DeviceClass).Spec)
}

func validateDeviceClass(c *resourcev1.DeviceClass, old *resourcev1.DeviceClassSpec) field.ErrorList {
	path := field.NewPath("spec")
	storedSelectors := old != nil && apiequalitySemantic(c.Spec.Selectors, old.Selectors)
	storedConfig := old != nil && apiequalitySemantic(c.Spec.Config, old.Config)
	errs := validateSelectors(c.Spec.Selectors, path.Child("selectors"), storedSelectors)
	errs = append(errs, eachOf(c.Spec.Config, resourcev1.DeviceConfigMaxSize, path.Child("config"),
		func(cfg resourcev1.DeviceClassConfiguration, path *field.Path) field.ErrorList {
			return validateOpaqueConfig(cfg.Opaque, path.Child("opaque"), storedConfig)
		})...)
	return append(errs, validateExtendedResourceName(c.Spec.ExtendedResourceName, path.Child("extendedResourceName"))...)
}

// ResourceSliceStrategy is the strategy of the cluster-scoped
// resourceslices resource, which drivers publish their devices in.
type ResourceSliceStrategy struct{}

// NamespaceScoped is false.
func (ResourceSliceStrategy) NamespaceScoped() bool { return false }

// PrepareForCreate starts the generation at 1 and drops the fields of
// features v1.37 has off.
func (ResourceSliceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	s := obj.(*resourcev1.ResourceSlice)
	s.Generation = 1
	dropSliceAlphaFields(&s.Spec, nil)
}

// PrepareForUpdate counts a spec change and drops the fields of features
// v1.37 has off, unless the slice used them already.
func (ResourceSliceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s, oldS := obj.(*resourcev1.ResourceSlice), old.(*resourcev1.ResourceSlice)
	registry.CountSpecChange(s, oldS, &s.Spec, &oldS.Spec)
	dropSliceAlphaFields(&s.Spec, &oldS.Spec)
}

// Validate validates a new slice.
func (ResourceSliceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateSliceSpec(&obj.(*resourcev1.ResourceSlice).Spec, nil)
}

// ValidateUpdate validates the slice against the old one.
func (ResourceSliceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateSliceSpec(&obj.(*resourcev1.ResourceSlice).Spec, &old.(*resourcev1.ResourceSlice).Spec)
}

// Fields adds kube's field selectors of slices: the node, the driver and
// the pool.
func (ResourceSliceStrategy) Fields(obj runtime.Object) fields.Set {
	s := obj.(*resourcev1.ResourceSlice)
	node := ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	return fields.Set{resourcev1.ResourceSliceSelectorNodeName: node, resourcev1.ResourceSliceSelectorDriver: s.Spec.Driver,
		"spec.pool.name": s.Spec.Pool.Name}
}

// DeviceTaintRuleStrategy is the strategy of the cluster-scoped
// devicetaintrules resource: a taint put on the devices a selector picks.
type DeviceTaintRuleStrategy struct{}

var _ registry.UnconditionalUpdater = DeviceTaintRuleStrategy{}

// NamespaceScoped is false.
func (DeviceTaintRuleStrategy) NamespaceScoped() bool { return false }

// AllowUnconditionalUpdate is false in v1, as in kube.
func (DeviceTaintRuleStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate clears the status and starts the generation at 1.
func (DeviceTaintRuleStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	r := obj.(*resourcev1.DeviceTaintRule)
	r.Status = resourcev1.DeviceTaintRuleStatus{}
	r.Generation = 1
}

// PrepareForUpdate keeps the status, stamps a new effect with the time it
// was added unless the client did, and counts a spec change.
func (DeviceTaintRuleStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
	r.Status = oldR.Status
	if r.Spec.Taint.Effect != oldR.Spec.Taint.Effect && r.Spec.Taint.TimeAdded.Equal(oldR.Spec.Taint.TimeAdded) {
		r.Spec.Taint.TimeAdded = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	}
	registry.CountSpecChange(r, oldR, &r.Spec, &oldR.Spec)
}

// Validate validates a new rule.
func (DeviceTaintRuleStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateTaintRule(&obj.(*resourcev1.DeviceTaintRule).Spec, nil)
}

// ValidateUpdate validates the rule; an unchanged effect is not checked
// again.
func (DeviceTaintRuleStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateTaintRule(&obj.(*resourcev1.DeviceTaintRule).Spec, &old.(*resourcev1.DeviceTaintRule).Spec)
}

func validateTaintRule(spec, old *resourcev1.DeviceTaintRuleSpec) field.ErrorList {
	path := field.NewPath("spec")
	var errs field.ErrorList
	if s := spec.DeviceSelector; s != nil {
		sp := path.Child("deviceSelector")
		if s.Driver != nil {
			errs = append(errs, validateDriverName(*s.Driver, sp.Child("driver"))...)
		}
		if s.Pool != nil {
			errs = append(errs, validatePoolName(*s.Pool, sp.Child("pool"))...)
		}
		if s.Device != nil {
			errs = append(errs, validateDeviceName(*s.Device, sp.Child("device"))...)
		}
	}
	var oldTaint *resourcev1.DeviceTaint
	if old != nil {
		oldTaint = &old.Taint
	}
	return append(errs, validateTaint(spec.Taint, oldTaint, path.Child("taint"))...)
}

// DeviceTaintRuleStatusStrategy is the strategy of devicetaintrules/status.
type DeviceTaintRuleStatusStrategy struct{ DeviceTaintRuleStrategy }

// PrepareForUpdate keeps the spec and the metadata of old.
func (DeviceTaintRuleStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*resourcev1.DeviceTaintRule), old.(*resourcev1.DeviceTaintRule)
	r.Spec = oldR.Spec
	metav1.ResetObjectMetaForStatus(&r.ObjectMeta, &oldR.ObjectMeta)
}

// ValidateUpdate bounds and validates the conditions.
func (DeviceTaintRuleStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	conditions := obj.(*resourcev1.DeviceTaintRule).Status.Conditions
	path := field.NewPath("status", "conditions")
	errs := metavalidation.ValidateConditions(conditions, path)
	if len(conditions) > resourcev1.DeviceTaintRuleStatusMaxConditions {
		errs = append(errs, field.TooMany(path, len(conditions), resourcev1.DeviceTaintRuleStatusMaxConditions))
	}
	return errs
}

// immutableSpec is kube's rule for claims and templates: on update only the
// spec's immutability is checked, the rest was checked on create.
func immutableSpec[S any](spec, old S) field.ErrorList {
	return apivalidation.ValidateImmutableField(spec, old, field.NewPath("spec"))
}
