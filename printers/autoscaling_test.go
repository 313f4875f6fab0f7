package printers

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func quantity(s string) *resource.Quantity { return ptr(resource.MustParse(s)) }

func TestHPATargets(t *testing.T) {
	resourceSpec := func(name string, target autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceName(name), Target: target}}
	}
	specs := []autoscalingv2.MetricSpec{
		resourceSpec("cpu", autoscalingv2.MetricTarget{AverageUtilization: ptr(int32(50))}),
		{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: quantity("1k")}}},
		{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{Target: autoscalingv2.MetricTarget{Value: quantity("10")}}},
		{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Target: autoscalingv2.MetricTarget{AverageValue: quantity("30")}}},
		{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "memory",
			Target: autoscalingv2.MetricTarget{AverageValue: quantity("1Gi")}}},
		resourceSpec("cpu", autoscalingv2.MetricTarget{}),
		{Type: "Unknown"},
	}
	statuses := []autoscalingv2.MetricStatus{
		{Resource: &autoscalingv2.ResourceMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(int32(12))}}},
		{Pods: &autoscalingv2.PodsMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: quantity("500")}}},
		{Object: &autoscalingv2.ObjectMetricStatus{}},
		{External: &autoscalingv2.ExternalMetricStatus{Current: autoscalingv2.MetricValueStatus{AverageValue: quantity("20")}}},
		{ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{}},
	}
	want := []string{"cpu: 12%/50%", "500/1k", "<nil>/10", "20/30 (avg)", "memory: <nil>/1Gi", "cpu: <unknown>/<auto>", "<unknown type>"}
	for i := range specs {
		var status autoscalingv2.MetricStatus
		if i < len(statuses) {
			status = statuses[i]
		}
		if got := hpaTarget(specs[i], status); got != want[i] {
			t.Errorf("metric %d = %q, want %q", i, got, want[i])
		}
		if got := hpaTarget(specs[i], autoscalingv2.MetricStatus{}); i < 5 && got == want[i] {
			t.Errorf("metric %d without a status = %q, want it <unknown>", i, got)
		}
	}
	if got := hpaTargets(specs[:3], statuses); got != "cpu: 12%/50%, 500/1k + 1 more..." {
		t.Errorf("three metrics = %q", got)
	}
	if got := hpaTargets(nil, nil); got != "<none>" {
		t.Errorf("no metric = %q", got)
	}
}

func TestHPARows(t *testing.T) {
	ref := autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}
	v2 := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: created("h"), Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: ref, MinReplicas: ptr(int32(2)), MaxReplicas: 10,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: "memory", Target: autoscalingv2.MetricTarget{AverageUtilization: ptr(int32(70))}}}},
	}, Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3}}

	v1Ref := autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}
	v1 := func(cpu, current *int32, annotations map[string]string) *autoscalingv1.HorizontalPodAutoscaler {
		h := &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: created("h"),
			Spec:       autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: v1Ref, MaxReplicas: 5, TargetCPUUtilizationPercentage: cpu},
			Status:     autoscalingv1.HorizontalPodAutoscalerStatus{CurrentReplicas: 1, CurrentCPUUtilizationPercentage: current},
		}
		h.Annotations = annotations
		return h
	}
	others := map[string]string{
		"autoscaling.alpha.kubernetes.io/metrics": `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}},` +
			`{"type":"Object","object":{"target":{"kind":"Service","name":"s"},"metricName":"hits","targetValue":"0","averageValue":"5"}}]`,
		"autoscaling.alpha.kubernetes.io/current-metrics": `[{"type":"Pods","pods":{"metricName":"qps","currentAverageValue":"7"}}]`,
	}
	runRows(t, []rowCase{
		{"v2", printed(hpaV2Row, v2), []any{"h", "Deployment/web", "memory: <unknown>/70%", "2", int64(10), int64(3), "60m"}},
		{"v1 cpu", printed(hpaV1Row, v1(ptr(int32(60)), ptr(int32(30)), nil)),
			[]any{"h", "Deployment/web", "cpu: 30%/60%", "<unset>", int64(5), int64(1), "60m"}},
		{"v1 default", printed(hpaV1Row, v1(nil, nil, nil)),
			[]any{"h", "Deployment/web", "cpu: <unknown>/80%", "<unset>", int64(5), int64(1), "60m"}},
		{"v1 annotations", printed(hpaV1Row, v1(ptr(int32(60)), ptr(int32(30)), others)),
			[]any{"h", "Deployment/web", "7/10, <unknown>/5 (avg) + 1 more...", "<unset>", int64(5), int64(1), "60m"}},
		{"v1 bad annotation", printed(hpaV1Row, v1(nil, nil, map[string]string{"autoscaling.alpha.kubernetes.io/metrics": "{"})),
			[]any{"h", "Deployment/web", "cpu: <unknown>/80%", "<unset>", int64(5), int64(1), "60m"}},
	})
}
