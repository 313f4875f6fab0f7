package core

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var standardLimitTypes = sets.New(corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)

// ValidateLimitRange validates the limits of a limit range: one item per
// type, known resource names, and bounds in order (min <= default request
// <= default <= max).
func ValidateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	var errs field.ErrorList
	types := sets.New[corev1.LimitType]()
	fldPath := field.NewPath("spec", "limits")
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		path := fldPath.Index(i)
		errs = append(errs, validateLimitType(item.Type, path.Child("type"))...)
		if types.Has(item.Type) {
			errs = append(errs, field.Duplicate(path.Child("type"), item.Type))
		}
		types.Insert(item.Type)
		errs = append(errs, validateLimitRangeItem(item, path)...)
	}
	return errs
}

func validateLimitType(t corev1.LimitType, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(fldPath, t, msg))
	}
	if len(errs) == 0 && !strings.Contains(string(t), "/") && !standardLimitTypes.Has(t) {
		errs = append(errs, field.Invalid(fldPath, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// validateLimitRangeItem checks the resource names of one item, what its
// type allows, and the order of its bounds.
func validateLimitRangeItem(item *corev1.LimitRangeItem, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	nameFn := validateResourceName
	if item.Type == corev1.LimitTypePod || item.Type == corev1.LimitTypeContainer {
		nameFn = validateContainerResourceName
	}
	names := func(list corev1.ResourceList, child string) {
		for name := range list {
			errs = append(errs, nameFn(name, fldPath.Child(child).Key(string(name)))...)
		}
	}
	names(item.Max, "max")
	names(item.Min, "min")
	b := limitBounds{min: item.Min, max: item.Max, ratio: item.MaxLimitRequestRatio}
	if item.Type == corev1.LimitTypePod {
		if len(item.Default) > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child("default"), "may not be specified when `type` is 'Pod'"))
		}
		if len(item.DefaultRequest) > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
		}
	} else {
		names(item.Default, "default")
		names(item.DefaultRequest, "defaultRequest")
		b.def, b.defReq = item.Default, item.DefaultRequest
	}
	if item.Type == corev1.LimitTypePersistentVolumeClaim {
		_, hasMin := item.Min[corev1.ResourceStorage]
		_, hasMax := item.Max[corev1.ResourceStorage]
		if !hasMin && !hasMax {
			errs = append(errs, field.Required(fldPath.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
		}
	}
	names(item.MaxLimitRequestRatio, "maxLimitRequestRatio")
	return append(errs, b.validate(fldPath)...)
}

// limitBounds are the quantities of one limit range item that must be in
// order; def and defReq are unset for Pod items.
type limitBounds struct {
	min, max, def, defReq, ratio corev1.ResourceList
}

func (b limitBounds) names() sets.Set[corev1.ResourceName] {
	names := sets.New[corev1.ResourceName]()
	for _, l := range []corev1.ResourceList{b.min, b.max, b.def, b.defReq, b.ratio} {
		for name := range l {
			names.Insert(name)
		}
	}
	return names
}

// validate checks, resource by resource, min <= defaultRequest <=
// default <= max, and a max limit/request ratio of at least 1 that
// max/min allows.
func (b limitBounds) validate(fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name := range b.names() {
		key := string(name)
		minQ, hasMin := b.min[name]
		maxQ, hasMax := b.max[name]
		def, hasDef := b.def[name]
		defReq, hasDefReq := b.defReq[name]
		bad := func(child string, v resource.Quantity, format string, args ...any) {
			errs = append(errs, field.Invalid(fldPath.Child(child).Key(key), v, fmt.Sprintf(format, args...)))
		}
		if hasMin && hasMax && minQ.Cmp(maxQ) > 0 {
			bad("min", minQ, "min value %s is greater than max value %s", minQ.String(), maxQ.String())
		}
		if hasDefReq && hasMin && minQ.Cmp(defReq) > 0 {
			bad("defaultRequest", defReq, "min value %s is greater than default request value %s", minQ.String(), defReq.String())
		}
		if hasDefReq && hasMax && defReq.Cmp(maxQ) > 0 {
			bad("defaultRequest", defReq, "default request value %s is greater than max value %s", defReq.String(), maxQ.String())
		}
		if hasDefReq && hasDef && defReq.Cmp(def) > 0 {
			bad("defaultRequest", defReq, "default request value %s is greater than default limit value %s", defReq.String(), def.String())
		}
		if hasDef && hasMin && minQ.Cmp(def) > 0 {
			bad("default", minQ, "min value %s is greater than default value %s", minQ.String(), def.String())
		}
		if hasDef && hasMax && def.Cmp(maxQ) > 0 {
			bad("default", maxQ, "default value %s is greater than max value %s", def.String(), maxQ.String())
		}
		if ratio, ok := b.ratio[name]; ok {
			errs = append(errs, validateLimitRatio(ratio, minQ, maxQ, hasMin && hasMax, fldPath.Child("maxLimitRequestRatio").Key(key))...)
		}
		if !overcommitAllowed(name) && hasDef && hasDefReq && def.Cmp(defReq) != 0 {
			bad("defaultRequest", defReq, "default value %s must equal to defaultRequest value %s in %s", def.String(), defReq.String(), key)
		}
	}
	return errs
}

// validateLimitRatio requires a ratio of at least 1, and no more than
// max/min when both are set, compared in milli units when they fit.
func validateLimitRatio(ratio, minQ, maxQ resource.Quantity, bounded bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		errs = append(errs, field.Invalid(fldPath, ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if !bounded {
		return errs
	}
	r, lo, hi := float64(ratio.Value()), minQ.Value(), maxQ.Value()
	if ratio.Value() < resource.MaxMilliValue && lo < resource.MaxMilliValue && hi < resource.MaxMilliValue {
		r, lo, hi = float64(ratio.MilliValue())/1000, minQ.MilliValue(), maxQ.MilliValue()
	}
	limit := float64(hi) / float64(lo)
	if r > limit {
		errs = append(errs, field.Invalid(fldPath, ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limit)))
	}
	return errs
}
