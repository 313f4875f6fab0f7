package printers

import (
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The annotations an autoscaling/v1 HPA keeps the metrics of autoscaling/v2
// in, besides its CPU target, in the metric types of autoscaling/v1.
const (
	hpaMetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	hpaCurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
)

// defaultCPUUtilization is the target of an HPA with no metric.
const defaultCPUUtilization = 80

// v1Metrics returns the metrics and their statuses an autoscaling/v1 HPA
// stands for, as kube converts them, with the fields the Targets column
// reads: the annotation's metrics then the CPU target, and the annotation's
// statuses or else the current CPU.
func v1Metrics(h *autoscalingv1.HorizontalPodAutoscaler) ([]autoscalingv2.MetricSpec, []autoscalingv2.MetricStatus) {
	var specs []autoscalingv2.MetricSpec
	if p := h.Spec.TargetCPUUtilizationPercentage; p != nil {
		specs = []autoscalingv2.MetricSpec{cpuMetric(*p)}
	}
	var others []autoscalingv1.MetricSpec
	if enc, ok := h.Annotations[hpaMetricsAnnotation]; ok && json.Unmarshal([]byte(enc), &others) == nil {
		converted := make([]autoscalingv2.MetricSpec, 0, len(others)+len(specs))
		for _, m := range others {
			converted = append(converted, v1MetricSpec(m))
		}
		specs = append(converted, specs...)
	}
	if len(specs) == 0 {
		specs = []autoscalingv2.MetricSpec{cpuMetric(defaultCPUUtilization)}
	}

	var statuses []autoscalingv2.MetricStatus
	if p := h.Status.CurrentCPUUtilizationPercentage; p != nil {
		statuses = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: p}}}}
	}
	var current []autoscalingv1.MetricStatus
	if enc, ok := h.Annotations[hpaCurrentMetricsAnnotation]; ok && json.Unmarshal([]byte(enc), &current) == nil {
		statuses = make([]autoscalingv2.MetricStatus, len(current))
		for i, m := range current {
			statuses[i] = v1MetricStatus(m)
		}
	}
	return specs, statuses
}

func cpuMetric(utilization int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &utilization}}}
}

func v1MetricSpec(in autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		// An average target keeps a value only when it is not zero: v1 cannot
		// leave it out.
		var value *resource.Quantity
		if s.AverageValue == nil || !s.TargetValue.IsZero() {
			value = &s.TargetValue
		}
		out.Object = &autoscalingv2.ObjectMetricSource{Target: autoscalingv2.MetricTarget{Value: value, AverageValue: s.AverageValue}}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: &s.TargetAverageValue}}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name,
			Target: autoscalingv2.MetricTarget{AverageValue: s.TargetAverageValue, AverageUtilization: s.TargetAverageUtilization}}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: s.Name, Container: s.Container,
			Target: autoscalingv2.MetricTarget{AverageValue: s.TargetAverageValue, AverageUtilization: s.TargetAverageUtilization}}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{Value: s.TargetValue, AverageValue: s.TargetAverageValue}}
	}
	return out
}

func v1MetricStatus(in autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		out.Object = &autoscalingv2.ObjectMetricStatus{Current: autoscalingv2.MetricValueStatus{Value: &s.CurrentValue, AverageValue: s.AverageValue}}
	}
	if s := in.Pods; s != nil {
		out.Pods = &autoscalingv2.PodsMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: &s.CurrentAverageValue}}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: s.Name,
			Current: autoscalingv2.MetricValueStatus{AverageValue: &s.CurrentAverageValue, AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container,
			Current: autoscalingv2.MetricValueStatus{AverageValue: &s.CurrentAverageValue, AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv2.ExternalMetricStatus{Current: autoscalingv2.MetricValueStatus{Value: &s.CurrentValue, AverageValue: s.CurrentAverageValue}}
	}
	return out
}
