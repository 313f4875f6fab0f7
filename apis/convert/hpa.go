package convert

import (
	"encoding/json"
	"maps"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// The annotations in which an autoscaling/v1 HorizontalPodAutoscaler carries
// what only autoscaling/v2 can say, under kube's names, so that a v1 client
// that reads, changes and writes back an autoscaler loses nothing.
const (
	HPAMetricSpecsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	HPAMetricStatusesAnnotation     = "autoscaling.alpha.kubernetes.io/current-metrics"
	HPAConditionsAnnotation         = "autoscaling.alpha.kubernetes.io/conditions"
	HPABehaviorSpecsAnnotation      = "autoscaling.alpha.kubernetes.io/behavior"
	HPAToleranceScaleDownAnnotation = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	HPAToleranceScaleUpAnnotation   = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
)

// HPASpecAnnotations describe the spec; HPAStatusAnnotations the status.
var (
	HPASpecAnnotations   = []string{HPAMetricSpecsAnnotation, HPABehaviorSpecsAnnotation}
	HPAStatusAnnotations = []string{HPAMetricStatusesAnnotation, HPAConditionsAnnotation}
)

var hpaRoundTripAnnotations = []string{
	HPAMetricSpecsAnnotation, HPABehaviorSpecsAnnotation, HPAToleranceScaleDownAnnotation,
	HPAToleranceScaleUpAnnotation, HPAMetricStatusesAnnotation, HPAConditionsAnnotation,
}

// DefaultCPUUtilization is the target of the CPU metric an autoscaler without
// metrics gets.
const DefaultCPUUtilization = 80

// DropHPARoundTripAnnotations returns annotations without the round-trip
// annotations of autoscaling/v1. It returns the map itself when it has none
// of them, else a copy.
func DropHPARoundTripAnnotations(annotations map[string]string) map[string]string {
	found := false
	for _, k := range hpaRoundTripAnnotations {
		if _, ok := annotations[k]; ok {
			found = true
		}
	}
	if !found {
		return annotations
	}
	out := maps.Clone(annotations)
	for _, k := range hpaRoundTripAnnotations {
		delete(out, k)
	}
	return out
}

// HPAToV1 converts an autoscaling/v2 autoscaler to autoscaling/v1, as kube
// serves a stored autoscaler to a v1 client: v2 defaults first, then the CPU
// utilization target and current value in v1's fields, and the rest (other
// metrics, current metrics, behavior, conditions) in annotations. out shares
// no memory with in.
func HPAToV1(in *autoscalingv2.HorizontalPodAutoscaler, out *autoscalingv1.HorizontalPodAutoscaler) error {
	in = in.DeepCopy()
	DefaultHPAV2(in)
	out.ObjectMeta = in.ObjectMeta
	out.Annotations = DropHPARoundTripAnnotations(in.Annotations)
	out.Spec = hpaSpecToV1(&in.Spec)
	out.Status = hpaStatusToV1(&in.Status)

	var other []autoscalingv1.MetricSpec
	for i := range in.Spec.Metrics {
		if !isCPUUtilization(&in.Spec.Metrics[i]) {
			other = append(other, metricSpecToV1(&in.Spec.Metrics[i]))
		}
	}
	current := make([]autoscalingv1.MetricStatus, len(in.Status.CurrentMetrics))
	for i := range in.Status.CurrentMetrics {
		current[i] = metricStatusToV1(&in.Status.CurrentMetrics[i])
	}
	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
	for i, c := range in.Status.Conditions {
		conditions[i] = autoscalingv1.HorizontalPodAutoscalerCondition{
			Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
			ObservedGeneration: c.ObservedGeneration,
		}
	}
	add := annotationAdder(out)
	if len(other) > 0 {
		if err := add(HPAMetricSpecsAnnotation, other); err != nil {
			return err
		}
	}
	if len(current) > 0 {
		if err := add(HPAMetricStatusesAnnotation, current); err != nil {
			return err
		}
	}
	if in.Spec.Behavior != nil {
		if err := add(HPABehaviorSpecsAnnotation, behaviorToAnnotation(in.Spec.Behavior)); err != nil {
			return err
		}
	}
	if len(conditions) > 0 {
		return add(HPAConditionsAnnotation, conditions)
	}
	return nil
}

// annotationAdder returns a function that stores v as JSON in out's
// annotation key, copying the annotations the first time.
func annotationAdder(out *autoscalingv1.HorizontalPodAutoscaler) func(key string, v any) error {
	copied := false
	return func(key string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if !copied {
			out.Annotations = maps.Clone(out.Annotations)
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			copied = true
		}
		out.Annotations[key] = string(data)
		return nil
	}
}

// isCPUUtilization reports whether m is the metric v1's
// targetCPUUtilizationPercentage stands for.
func isCPUUtilization(m *autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil &&
		m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

func hpaSpecToV1(in *autoscalingv2.HorizontalPodAutoscalerSpec) autoscalingv1.HorizontalPodAutoscalerSpec {
	out := autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.ScaleTargetRef),
		MinReplicas:    in.MinReplicas, MaxReplicas: in.MaxReplicas,
	}
	for i := range in.Metrics {
		if isCPUUtilization(&in.Metrics[i]) {
			out.TargetCPUUtilizationPercentage = ptrTo(*in.Metrics[i].Resource.Target.AverageUtilization)
			break
		}
	}
	return out
}

func hpaStatusToV1(in *autoscalingv2.HorizontalPodAutoscalerStatus) autoscalingv1.HorizontalPodAutoscalerStatus {
	out := autoscalingv1.HorizontalPodAutoscalerStatus{
		ObservedGeneration: in.ObservedGeneration, LastScaleTime: in.LastScaleTime,
		CurrentReplicas: in.CurrentReplicas, DesiredReplicas: in.DesiredReplicas,
	}
	// As in kube, the last CPU metric with a utilization wins.
	for _, m := range in.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
			m.Resource.Current.AverageUtilization != nil {
			out.CurrentCPUUtilizationPercentage = ptrTo(*m.Resource.Current.AverageUtilization)
		}
	}
	return out
}

// HPAToV2 converts an autoscaling/v1 autoscaler to autoscaling/v2, as kube
// stores what a v1 client writes: the round-trip annotations become fields
// again and are dropped, and an autoscaler left without metrics targets 80%
// CPU utilization. out shares no memory with in.
func HPAToV2(in *autoscalingv1.HorizontalPodAutoscaler, out *autoscalingv2.HorizontalPodAutoscaler) error {
	in = in.DeepCopy()
	out.ObjectMeta = in.ObjectMeta
	out.Spec = hpaSpecToV2(&in.Spec)
	out.Status = hpaStatusToV2(&in.Status)
	a := in.Annotations
	if enc, ok := a[HPAMetricSpecsAnnotation]; ok {
		var other []autoscalingv1.MetricSpec
		if err := json.Unmarshal([]byte(enc), &other); err == nil {
			metrics := make([]autoscalingv2.MetricSpec, 0, len(other)+len(out.Spec.Metrics))
			for i := range other {
				metrics = append(metrics, metricSpecToV2(&other[i]))
			}
			// The CPU target of v1's field comes after the other metrics.
			out.Spec.Metrics = append(metrics, out.Spec.Metrics...)
		}
	}
	if enc, ok := a[HPABehaviorSpecsAnnotation]; ok {
		var b behaviorAnnotation
		if err := json.Unmarshal([]byte(enc), &b); err == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = b.toV2()
		}
	}
	if enc, ok := a[HPAMetricStatusesAnnotation]; ok {
		var current []autoscalingv1.MetricStatus
		if err := json.Unmarshal([]byte(enc), &current); err == nil {
			out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(current))
			for i := range current {
				out.Status.CurrentMetrics[i] = metricStatusToV2(&current[i])
			}
		}
	}
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(DefaultCPUUtilization)}
	}
	if enc, ok := a[HPAConditionsAnnotation]; ok {
		var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
		if err := json.Unmarshal([]byte(enc), &conditions); err == nil {
			out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conditions))
			for i, c := range conditions {
				out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{
					Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
					LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
					ObservedGeneration: c.ObservedGeneration,
				}
			}
		}
	}
	out.Annotations = DropHPARoundTripAnnotations(out.Annotations)
	return nil
}

func cpuUtilizationMetric(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{
			Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptrTo(percent),
		}},
	}
}

func hpaSpecToV2(in *autoscalingv1.HorizontalPodAutoscalerSpec) autoscalingv2.HorizontalPodAutoscalerSpec {
	out := autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.ScaleTargetRef),
		MinReplicas:    in.MinReplicas, MaxReplicas: in.MaxReplicas,
	}
	if in.TargetCPUUtilizationPercentage != nil {
		out.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(*in.TargetCPUUtilizationPercentage)}
	}
	return out
}

func hpaStatusToV2(in *autoscalingv1.HorizontalPodAutoscalerStatus) autoscalingv2.HorizontalPodAutoscalerStatus {
	out := autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: in.ObservedGeneration, LastScaleTime: in.LastScaleTime,
		CurrentReplicas: in.CurrentReplicas, DesiredReplicas: in.DesiredReplicas,
	}
	if in.CurrentCPUUtilizationPercentage != nil {
		out.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{
				AverageUtilization: ptrTo(*in.CurrentCPUUtilizationPercentage),
			}},
		}}
	}
	return out
}

// HPAListToV1 converts a list with HPAToV1.
func HPAListToV1(in *autoscalingv2.HorizontalPodAutoscalerList, out *autoscalingv1.HorizontalPodAutoscalerList) error {
	out.ListMeta = *in.ListMeta.DeepCopy()
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]autoscalingv1.HorizontalPodAutoscaler, len(in.Items))
		for i := range in.Items {
			if err := HPAToV1(&in.Items[i], &out.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// HPAListToV2 converts a list with HPAToV2.
func HPAListToV2(in *autoscalingv1.HorizontalPodAutoscalerList, out *autoscalingv2.HorizontalPodAutoscalerList) error {
	out.ListMeta = *in.ListMeta.DeepCopy()
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]autoscalingv2.HorizontalPodAutoscaler, len(in.Items))
		for i := range in.Items {
			if err := HPAToV2(&in.Items[i], &out.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddHPAConversionFuncs registers the autoscaling v1 <-> v2 conversions of
// autoscalers and their lists in s.
func AddHPAConversionFuncs(s *runtime.Scheme) error {
	funcs := []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{(*autoscalingv2.HorizontalPodAutoscaler)(nil), (*autoscalingv1.HorizontalPodAutoscaler)(nil), func(a, b any, _ conversion.Scope) error {
			return HPAToV1(a.(*autoscalingv2.HorizontalPodAutoscaler), b.(*autoscalingv1.HorizontalPodAutoscaler))
		}},
		{(*autoscalingv1.HorizontalPodAutoscaler)(nil), (*autoscalingv2.HorizontalPodAutoscaler)(nil), func(a, b any, _ conversion.Scope) error {
			return HPAToV2(a.(*autoscalingv1.HorizontalPodAutoscaler), b.(*autoscalingv2.HorizontalPodAutoscaler))
		}},
		{(*autoscalingv2.HorizontalPodAutoscalerList)(nil), (*autoscalingv1.HorizontalPodAutoscalerList)(nil), func(a, b any, _ conversion.Scope) error {
			return HPAListToV1(a.(*autoscalingv2.HorizontalPodAutoscalerList), b.(*autoscalingv1.HorizontalPodAutoscalerList))
		}},
		{(*autoscalingv1.HorizontalPodAutoscalerList)(nil), (*autoscalingv2.HorizontalPodAutoscalerList)(nil), func(a, b any, _ conversion.Scope) error {
			return HPAListToV2(a.(*autoscalingv1.HorizontalPodAutoscalerList), b.(*autoscalingv2.HorizontalPodAutoscalerList))
		}},
	}
	for _, f := range funcs {
		if err := s.AddConversionFunc(f.a, f.b, f.fn); err != nil {
			return err
		}
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }
