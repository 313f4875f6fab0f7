package convert

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// behaviorAnnotation is the JSON of autoscaling/v1's behavior annotation.
// kube writes its internal type there, which has no JSON tags: the keys are
// the Go field names ("ScaleUp", "StabilizationWindowSeconds") and unset
// fields are null. These types have the same fields, in the same order, so
// that the annotation reads the same from either server.
type behaviorAnnotation struct {
	ScaleUp   *scalingRulesAnnotation
	ScaleDown *scalingRulesAnnotation
}

type scalingRulesAnnotation struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []scalingPolicyAnnotation
	Tolerance                  *resource.Quantity
}

type scalingPolicyAnnotation struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func behaviorToAnnotation(in *autoscalingv2.HorizontalPodAutoscalerBehavior) behaviorAnnotation {
	return behaviorAnnotation{ScaleUp: rulesToAnnotation(in.ScaleUp), ScaleDown: rulesToAnnotation(in.ScaleDown)}
}

func rulesToAnnotation(in *autoscalingv2.HPAScalingRules) *scalingRulesAnnotation {
	if in == nil {
		return nil
	}
	out := &scalingRulesAnnotation{
		StabilizationWindowSeconds: in.StabilizationWindowSeconds, SelectPolicy: in.SelectPolicy, Tolerance: in.Tolerance,
	}
	if in.Policies != nil {
		out.Policies = make([]scalingPolicyAnnotation, len(in.Policies))
		for i, p := range in.Policies {
			out.Policies[i] = scalingPolicyAnnotation(p)
		}
	}
	return out
}

func (b behaviorAnnotation) toV2() *autoscalingv2.HorizontalPodAutoscalerBehavior {
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: b.ScaleUp.toV2(), ScaleDown: b.ScaleDown.toV2()}
}

func (r *scalingRulesAnnotation) toV2() *autoscalingv2.HPAScalingRules {
	if r == nil {
		return nil
	}
	out := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance,
	}
	if r.Policies != nil {
		out.Policies = make([]autoscalingv2.HPAScalingPolicy, len(r.Policies))
		for i, p := range r.Policies {
			out.Policies[i] = autoscalingv2.HPAScalingPolicy(p)
		}
	}
	return out
}

// DefaultHPAV2 applies kube's autoscaling/v2 defaults: one minimum replica,
// an 80% CPU utilization target when there is no metric, and, when a
// behavior is set, every unset field of both scaling directions.
// Storage-read v2 autoscalers are defaulted before their conversion to v1,
// as kube decodes them, so the defaults live with the conversion.
func DefaultHPAV2(h *autoscalingv2.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = ptrTo[int32](1)
	}
	if len(h.Spec.Metrics) == 0 {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilizationMetric(DefaultCPUUtilization)}
	}
	if b := h.Spec.Behavior; b != nil {
		b.ScaleUp = fillScalingRules(b.ScaleUp, defaultScaleUpRules())
		b.ScaleDown = fillScalingRules(b.ScaleDown, defaultScaleDownRules())
	}
}

// defaultScaleUpRules: no stabilization; the larger of 4 pods or doubling
// per 15 seconds.
func defaultScaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptrTo[int32](0),
		SelectPolicy:               ptrTo(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// defaultScaleDownRules: any number of pods per 15 seconds. The
// stabilization window stays unset: the controller's flag decides it.
func defaultScaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: ptrTo(autoscalingv2.MaxChangePolicySelect),
		Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
	}
}

// fillScalingRules returns defaults with the fields set in rules.
func fillScalingRules(rules, defaults *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if rules == nil {
		return defaults
	}
	if rules.SelectPolicy != nil {
		defaults.SelectPolicy = rules.SelectPolicy
	}
	if rules.StabilizationWindowSeconds != nil {
		defaults.StabilizationWindowSeconds = rules.StabilizationWindowSeconds
	}
	if rules.Policies != nil {
		defaults.Policies = rules.Policies
	}
	if rules.Tolerance != nil {
		defaults.Tolerance = rules.Tolerance
	}
	return defaults
}
