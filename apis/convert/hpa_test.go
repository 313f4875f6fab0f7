package convert

import (
	"encoding/json"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

var hpaRef = autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}

// fullV2 is a defaulted v2 autoscaler that uses every kind of metric, a
// behavior and conditions: everything v1 can only carry in annotations.
func fullV2() *autoscalingv2.HorizontalPodAutoscaler {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "ns", Annotations: map[string]string{"keep": "me"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: hpaRef, MinReplicas: ptrTo[int32](2), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: selector},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("10")}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "s", APIVersion: "v1"},
					Metric:          autoscalingv2.MetricIdentifier{Name: "rps"},
					Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: q("5")}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
					Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("3")}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
					Name: corev1.ResourceMemory, Container: "app",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("1Gi")}}},
				cpuUtilizationMetric(60),
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{
				StabilizationWindowSeconds: ptrTo[int32](60), Tolerance: q("50m"),
			}},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			ObservedGeneration: ptrTo[int64](3), CurrentReplicas: 3, DesiredReplicas: 4,
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{
					AverageUtilization: ptrTo[int32](70), AverageValue: q("700m")}}}},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{
				Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale",
				LastTransitionTime: metav1.Unix(1700000000, 0), ObservedGeneration: ptrTo[int64](3)}},
		},
	}
	DefaultHPAV2(h)
	return h
}

func TestHPAToV1(t *testing.T) {
	v1 := &autoscalingv1.HorizontalPodAutoscaler{}
	if err := HPAToV1(fullV2(), v1); err != nil {
		t.Fatal(err)
	}
	if *v1.Spec.TargetCPUUtilizationPercentage != 60 || *v1.Status.CurrentCPUUtilizationPercentage != 70 ||
		*v1.Spec.MinReplicas != 2 || v1.Spec.MaxReplicas != 10 || v1.Spec.ScaleTargetRef.Kind != "Deployment" {
		t.Fatalf("v1 fields: %+v %+v", v1.Spec, v1.Status)
	}
	var other []autoscalingv1.MetricSpec
	if err := json.Unmarshal([]byte(v1.Annotations[HPAMetricSpecsAnnotation]), &other); err != nil || len(other) != 4 {
		t.Fatalf("metrics annotation: %v %v", other, err)
	}
	if other[0].Pods.TargetAverageValue.String() != "10" || other[1].Object.TargetValue.String() != "5" ||
		other[2].External.TargetAverageValue.String() != "3" || other[3].ContainerResource.Container != "app" {
		t.Fatalf("converted metrics: %+v", other)
	}
	// kube marshals its internal type, which has no JSON tags.
	want := `{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},` +
		`{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":60,` +
		`"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":"50m"}}`
	if got := v1.Annotations[HPABehaviorSpecsAnnotation]; got != want {
		t.Errorf("behavior annotation:\n%s\nwant\n%s", got, want)
	}
	if v1.Annotations[HPAMetricStatusesAnnotation] == "" || v1.Annotations[HPAConditionsAnnotation] == "" || v1.Annotations["keep"] != "me" {
		t.Errorf("annotations: %v", v1.Annotations)
	}
}

func TestHPARoundTrip(t *testing.T) {
	in := fullV2()
	v1 := &autoscalingv1.HorizontalPodAutoscaler{}
	if err := HPAToV1(in, v1); err != nil {
		t.Fatal(err)
	}
	back := &autoscalingv2.HorizontalPodAutoscaler{}
	if err := HPAToV2(v1, back); err != nil {
		t.Fatal(err)
	}
	// v1 puts the CPU target after the other metrics.
	want := fullV2()
	if !equality.Semantic.DeepEqual(back, want) {
		t.Fatalf("v2 -> v1 -> v2:\n%+v\nwant\n%+v", back.Spec, want.Spec)
	}
	again := &autoscalingv1.HorizontalPodAutoscaler{}
	if err := HPAToV1(back, again); err != nil || !equality.Semantic.DeepEqual(again, v1) {
		t.Fatalf("v1 -> v2 -> v1 changed: %v\n%+v\n%+v", err, again, v1)
	}
}

func TestHPAToV2(t *testing.T) {
	ref := autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}
	tests := []struct {
		name string
		in   autoscalingv1.HorizontalPodAutoscaler
		want []autoscalingv2.MetricSpec
	}{
		{"no target: 80% CPU", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref}},
			[]autoscalingv2.MetricSpec{cpuUtilizationMetric(80)}},
		{"CPU target", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: ref, TargetCPUUtilizationPercentage: ptrTo[int32](50)}},
			[]autoscalingv2.MetricSpec{cpuUtilizationMetric(50)}},
		{"other metrics, then CPU", autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
				HPAMetricSpecsAnnotation: `[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"1Gi"}}]`}},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref, TargetCPUUtilizationPercentage: ptrTo[int32](50)}},
			[]autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("1Gi")}}},
				cpuUtilizationMetric(50)}},
		{"bad annotation is ignored", autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{HPAMetricSpecsAnnotation: `{`}},
			Spec:       autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: ref}},
			[]autoscalingv2.MetricSpec{cpuUtilizationMetric(80)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &autoscalingv2.HorizontalPodAutoscaler{}
			if err := HPAToV2(&tt.in, out); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(out.Spec.Metrics, tt.want) {
				t.Errorf("metrics = %+v, want %+v", out.Spec.Metrics, tt.want)
			}
			if len(out.Annotations) != 0 {
				t.Errorf("round-trip annotations kept: %v", out.Annotations)
			}
		})
	}
}

func TestHPABehaviorAnnotationCase(t *testing.T) {
	// Annotations written with JSON field names are read too, and an empty
	// behavior is none.
	in := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		HPABehaviorSpecsAnnotation: `{"scaleUp":{"selectPolicy":"Min","policies":[{"type":"Pods","value":1,"periodSeconds":60}]}}`}}}
	out := &autoscalingv2.HorizontalPodAutoscaler{}
	_ = HPAToV2(in, out)
	if b := out.Spec.Behavior; b == nil || *b.ScaleUp.SelectPolicy != autoscalingv2.MinChangePolicySelect || b.ScaleUp.Policies[0].PeriodSeconds != 60 || b.ScaleDown != nil {
		t.Fatalf("behavior = %+v", b)
	}
	in.Annotations[HPABehaviorSpecsAnnotation] = `{}`
	out = &autoscalingv2.HorizontalPodAutoscaler{}
	_ = HPAToV2(in, out)
	if out.Spec.Behavior != nil {
		t.Fatalf("empty behavior annotation gave %+v", out.Spec.Behavior)
	}
}

func TestHPASchemeConversion(t *testing.T) {
	s := runtime.NewScheme()
	_ = autoscalingv1.AddToScheme(s)
	_ = autoscalingv2.AddToScheme(s)
	if err := AddHPAConversionFuncs(s); err != nil {
		t.Fatal(err)
	}
	list := &autoscalingv2.HorizontalPodAutoscalerList{Items: []autoscalingv2.HorizontalPodAutoscaler{*fullV2()}}
	out := &autoscalingv1.HorizontalPodAutoscalerList{}
	if err := s.Convert(list, out, nil); err != nil || len(out.Items) != 1 || *out.Items[0].Spec.TargetCPUUtilizationPercentage != 60 {
		t.Fatalf("list conversion: %+v, %v", out, err)
	}
}

func TestDefaultHPAV2(t *testing.T) {
	h := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptrTo[int32](30)}},
	}}
	DefaultHPAV2(h)
	up, down := h.Spec.Behavior.ScaleUp, h.Spec.Behavior.ScaleDown
	if *h.Spec.MinReplicas != 1 || len(h.Spec.Metrics) != 1 || *h.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Fatalf("spec defaults: %+v", h.Spec)
	}
	if *up.StabilizationWindowSeconds != 30 || len(up.Policies) != 2 || *up.SelectPolicy != autoscalingv2.MaxChangePolicySelect {
		t.Errorf("scaleUp = %+v", up)
	}
	if down.StabilizationWindowSeconds != nil || len(down.Policies) != 1 || down.Policies[0].Type != autoscalingv2.PercentScalingPolicy {
		t.Errorf("scaleDown = %+v", down)
	}
}
