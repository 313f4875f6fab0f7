package convert

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The metric sources of autoscaling/v1's annotations have the shape of
// v2beta1: one flat target per source. These functions move them to and
// from v2's MetricTarget and MetricValueStatus, as kube's conversions do.

func metricSpecToV1(in *autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv1.ObjectMetricSource{
			Target:     autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector, AverageValue: o.Target.AverageValue,
		}
		if o.Target.Value != nil {
			out.Object.TargetValue = *o.Target.Value
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: p.Metric.Name, Selector: p.Metric.Selector}
		if p.Target.AverageValue != nil {
			out.Pods.TargetAverageValue = *p.Target.AverageValue
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{
			Name: r.Name, TargetAverageUtilization: r.Target.AverageUtilization, TargetAverageValue: r.Target.AverageValue,
		}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{
			Name: c.Name, Container: c.Container,
			TargetAverageUtilization: c.Target.AverageUtilization, TargetAverageValue: c.Target.AverageValue,
		}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv1.ExternalMetricSource{
			MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector,
			TargetValue: e.Target.Value, TargetAverageValue: e.Target.AverageValue,
		}
	}
	return out
}

func metricSpecToV2(in *autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		target := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptrTo(o.TargetValue)}
		if o.AverageValue != nil {
			// v1 cannot leave targetValue out; a zero one next to an
			// averageValue means none.
			target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: o.AverageValue}
			if !o.TargetValue.IsZero() {
				target.Value = ptrTo(o.TargetValue)
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target), Target: target,
			Metric: autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptrTo(p.TargetAverageValue)},
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: r.Name, Target: resourceTarget(r.TargetAverageUtilization, r.TargetAverageValue)}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{
			Name: c.Name, Container: c.Container, Target: resourceTarget(c.TargetAverageUtilization, c.TargetAverageValue),
		}
	}
	if e := in.External; e != nil {
		typ := autoscalingv2.ValueMetricType
		if e.TargetValue == nil {
			typ = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Target: autoscalingv2.MetricTarget{Type: typ, Value: e.TargetValue, AverageValue: e.TargetAverageValue},
		}
	}
	return out
}

// resourceTarget is the target of a v1 (container) resource metric: a
// utilization when one is set, else an average value.
func resourceTarget(utilization *int32, averageValue *resource.Quantity) autoscalingv2.MetricTarget {
	typ := autoscalingv2.UtilizationMetricType
	if utilization == nil {
		typ = autoscalingv2.AverageValueMetricType
	}
	return autoscalingv2.MetricTarget{Type: typ, AverageUtilization: utilization, AverageValue: averageValue}
}

func metricStatusToV1(in *autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv1.ObjectMetricStatus{
			Target:     autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector, AverageValue: o.Current.AverageValue,
		}
		if o.Current.Value != nil {
			out.Object.CurrentValue = *o.Current.Value
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: p.Metric.Name, Selector: p.Metric.Selector}
		if p.Current.AverageValue != nil {
			out.Pods.CurrentAverageValue = *p.Current.AverageValue
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: r.Name, CurrentAverageUtilization: r.Current.AverageUtilization}
		if r.Current.AverageValue != nil {
			out.Resource.CurrentAverageValue = *r.Current.AverageValue
		}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{
			Name: c.Name, Container: c.Container, CurrentAverageUtilization: c.Current.AverageUtilization,
		}
		if c.Current.AverageValue != nil {
			out.ContainerResource.CurrentAverageValue = *c.Current.AverageValue
		}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv1.ExternalMetricStatus{
			MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector, CurrentAverageValue: e.Current.AverageValue,
		}
		if e.Current.Value != nil {
			out.External.CurrentValue = *e.Current.Value
		}
	}
	return out
}

func metricStatusToV2(in *autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if o := in.Object; o != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{
			DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric:          autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: ptrTo(o.CurrentValue), AverageValue: o.AverageValue},
		}
	}
	if p := in.Pods; p != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: ptrTo(p.CurrentAverageValue)},
		}
	}
	if r := in.Resource; r != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: r.Name, Current: autoscalingv2.MetricValueStatus{
			AverageValue: ptrTo(r.CurrentAverageValue), AverageUtilization: r.CurrentAverageUtilization,
		}}
	}
	if c := in.ContainerResource; c != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: c.Name, Container: c.Container,
			Current: autoscalingv2.MetricValueStatus{AverageValue: ptrTo(c.CurrentAverageValue), AverageUtilization: c.CurrentAverageUtilization}}
	}
	if e := in.External; e != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Current: autoscalingv2.MetricValueStatus{Value: ptrTo(e.CurrentValue), AverageValue: e.CurrentAverageValue},
		}
	}
	return out
}
