package autoscaling

import (
	"slices"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/core"
)

var metricSourceTypes = []string{
	string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
	string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType),
	string(autoscalingv2.ResourceMetricSourceType),
}

func validateMetrics(metrics []autoscalingv2.MetricSpec, fldPath *field.Path, minReplicas *int32, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	scalesToZero := false
	for i := range metrics {
		errs = append(errs, validateMetricSpec(&metrics[i], fldPath.Index(i), opts)...)
		if t := metrics[i].Type; t == autoscalingv2.ObjectMetricSourceType || t == autoscalingv2.ExternalMetricSourceType {
			scalesToZero = true
		}
	}
	if minReplicas != nil && *minReplicas == 0 && !scalesToZero {
		errs = append(errs, field.Forbidden(fldPath, "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

// metricSource is one of the sources a MetricSpec may populate: its field
// name and the validation of its content.
type metricSource struct {
	name     string
	typ      autoscalingv2.MetricSourceType
	set      bool
	validate func(fldPath *field.Path) field.ErrorList
}

func metricSources(m *autoscalingv2.MetricSpec, opts refOptions) []metricSource {
	return []metricSource{
		{"object", autoscalingv2.ObjectMetricSourceType, m.Object != nil, func(p *field.Path) field.ErrorList { return validateObjectSource(m.Object, p, opts) }},
		{"external", autoscalingv2.ExternalMetricSourceType, m.External != nil, func(p *field.Path) field.ErrorList { return validateExternalSource(m.External, p) }},
		{"pods", autoscalingv2.PodsMetricSourceType, m.Pods != nil, func(p *field.Path) field.ErrorList { return validatePodsSource(m.Pods, p) }},
		{"resource", autoscalingv2.ResourceMetricSourceType, m.Resource != nil, func(p *field.Path) field.ErrorList { return validateResourceSource(m.Resource, p) }},
		{"containerResource", autoscalingv2.ContainerResourceMetricSourceType, m.ContainerResource != nil, func(p *field.Path) field.ErrorList {
			return validateContainerResourceSource(m.ContainerResource, p)
		}},
	}
}

// validateMetricSpec validates the first populated source only, as kube
// does, requires the one the type names and forbids the others.
func validateMetricSpec(m *autoscalingv2.MetricSpec, fldPath *field.Path, opts refOptions) field.ErrorList {
	var errs field.ErrorList
	if m.Type == "" {
		errs = append(errs, field.Required(fldPath.Child("type"), "must specify a metric source type"))
	}
	if !slices.Contains(metricSourceTypes, string(m.Type)) {
		errs = append(errs, field.NotSupported(fldPath.Child("type"), m.Type, metricSourceTypes))
	}
	sources := metricSources(m, opts)
	var present []string
	for _, s := range sources {
		if !s.set {
			continue
		}
		if len(present) == 0 {
			errs = append(errs, s.validate(fldPath.Child(s.name))...)
		}
		present = append(present, s.name)
	}
	expected := ""
	for _, s := range sources {
		if s.typ == m.Type {
			expected = s.name
			if !s.set {
				errs = append(errs, field.Required(fldPath.Child(s.name), "must populate information for the given metric source"))
			}
		}
	}
	if expected == "" {
		errs = append(errs, field.NotSupported(fldPath.Child("type"), m.Type, metricSourceTypes))
	}
	if len(present) != 1 {
		for _, name := range present {
			if name != expected {
				errs = append(errs, field.Forbidden(fldPath.Child(name), "must populate the given metric source only"))
			}
		}
	}
	return errs
}

func validateObjectSource(src *autoscalingv2.ObjectMetricSource, fldPath *field.Path, opts refOptions) field.ErrorList {
	errs := validateCrossVersionRef(src.DescribedObject, fldPath.Child("describedObject"), opts)
	errs = append(errs, validateMetricIdentifier(src.Metric, fldPath.Child("metric"))...)
	errs = append(errs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(fldPath.Child("target", "averageValue"), "must set either a target value or averageValue"))
	}
	return errs
}

func validateExternalSource(src *autoscalingv2.ExternalMetricSource, fldPath *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, fldPath.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.Value == nil && src.Target.AverageValue == nil {
		errs = append(errs, field.Required(fldPath.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
	}
	if src.Target.Value != nil && src.Target.AverageValue != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("target", "value"), "may not set both a target value for metric and a per-pod target"))
	}
	return errs
}

func validatePodsSource(src *autoscalingv2.PodsMetricSource, fldPath *field.Path) field.ErrorList {
	errs := validateMetricIdentifier(src.Metric, fldPath.Child("metric"))
	errs = append(errs, validateMetricTarget(src.Target, fldPath.Child("target"))...)
	if src.Target.AverageValue == nil {
		errs = append(errs, field.Required(fldPath.Child("target", "averageValue"), "must specify a positive target averageValue"))
	}
	return errs
}

func validateResourceSource(src *autoscalingv2.ResourceMetricSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), "must specify a resource name"))
	}
	return append(errs, validateResourceMetricTarget(src.Target, fldPath.Child("target"))...)
}

func validateContainerResourceSource(src *autoscalingv2.ContainerResourceMetricSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if src.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, core.ValidateContainerResourceName(src.Name, fldPath.Child("name"))...)
	}
	if src.Container == "" {
		errs = append(errs, field.Required(fldPath.Child("container"), "must specify a container"))
	} else {
		for _, msg := range validation.IsDNS1123Label(src.Container) {
			errs = append(errs, field.Invalid(fldPath.Child("container"), src.Container, msg))
		}
	}
	return append(errs, validateResourceMetricTarget(src.Target, fldPath.Child("target"))...)
}

// validateResourceMetricTarget: a utilization or an average value, not both.
func validateResourceMetricTarget(t autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	errs := validateMetricTarget(t, fldPath)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(fldPath.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricTarget(t autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(fldPath.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		errs = append(errs, field.Invalid(fldPath.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(fldPath.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(fldPath.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(fldPath.Child("averageUtilization"), t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func validateMetricIdentifier(id autoscalingv2.MetricIdentifier, fldPath *field.Path) field.ErrorList {
	if id.Name == "" {
		return field.ErrorList{field.Required(fldPath.Child("name"), "must specify a metric name")}
	}
	return pathSegment(id.Name, fldPath.Child("name"))
}
