package autoscaling

import (
	"context"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/convert"
	"github.com/capstan-io/capstan/internal/fieldtest"
)

var ctx = context.Background()

// Table tests name expected errors by these short helpers.
type wantErr = fieldtest.Want

var (
	inv    = fieldtest.Invalid
	req    = fieldtest.Required
	forb   = fieldtest.Forbidden
	unsupp = fieldtest.NotSupported
	dup    = fieldtest.Duplicate
)

// checkErrs compares errors by type and path, ignoring order.
func checkErrs(t *testing.T, got field.ErrorList, want ...wantErr) {
	t.Helper()
	fieldtest.Check(t, got, want...)
}

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func hpa(mutate func(*autoscalingv2.HorizontalPodAutoscaler)) *autoscalingv2.HorizontalPodAutoscaler {
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "ns"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MaxReplicas:    5,
		},
	}
	HPAStrategy{}.Default(h)
	if mutate != nil {
		mutate(h)
	}
	return h
}

func TestValidateHPA(t *testing.T) {
	objectMetric := func(apiVersion string) autoscalingv2.MetricSpec {
		return autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Service", Name: "s", APIVersion: apiVersion},
			Metric:          autoscalingv2.MetricIdentifier{Name: "rps"},
			Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: q("1")}}}
	}
	tests := []struct {
		name   string
		mutate func(*autoscalingv2.HorizontalPodAutoscaler)
		want   []wantErr
	}{
		{"valid", nil, nil},
		{"max below min", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](6) }, []wantErr{inv("spec.maxReplicas")}},
		{"no max", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 }, []wantErr{req("spec.maxReplicas"), inv("spec.maxReplicas")}},
		{"negative min", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](-1) }, []wantErr{inv("spec.minReplicas")}},
		{"zero min needs an object metric", func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptr.To[int32](0) }, []wantErr{forb("spec.metrics")}},
		{"zero min with an object metric", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.MinReplicas = ptr.To[int32](0)
			h.Spec.Metrics = append(h.Spec.Metrics, objectMetric("v1"))
		}, nil},
		{"target ref", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Name: "a/b", APIVersion: "v1"}
		}, []wantErr{req("spec.scaleTargetRef.kind"), inv("spec.scaleTargetRef.name"), inv("spec.scaleTargetRef.apiVersion")}},
		{"replication controllers are in the core group", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Kind: "ReplicationController", Name: "rc", APIVersion: "v1"}
		}, nil},
		{"metric type", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Resource: h.Spec.Metrics[0].Resource}}
		}, []wantErr{req("spec.metrics[0].type"), unsupp("spec.metrics[0].type"), unsupp("spec.metrics[0].type")}},
		{"two sources", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "x"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q("1")}}
		}, []wantErr{forb("spec.metrics[0].pods")}},
		{"missing source", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType}}
		}, []wantErr{req("spec.metrics[0].pods")}},
		{"resource target", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target = autoscalingv2.MetricTarget{Type: "Bad", AverageUtilization: ptr.To[int32](0), AverageValue: q("-1")}
		}, []wantErr{inv("spec.metrics[0].resource.target.type"), inv("spec.metrics[0].resource.target.averageUtilization"),
			inv("spec.metrics[0].resource.target.averageValue"), forb("spec.metrics[0].resource.target.averageValue")}},
		{"container resource", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ContainerResourceMetricSourceType,
				ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "pods", Container: "Bad_",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}}}}
		}, []wantErr{inv("spec.metrics[0].containerResource.name"), inv("spec.metrics[0].containerResource.container"),
			req("spec.metrics[0].containerResource.target.averageUtilization")}},
		{"object metric in a group-less version", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{objectMetric("a/b/c")}
		}, []wantErr{inv("spec.metrics[0].object.describedObject.apiVersion")}},
		{"external", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: q("1"), AverageValue: q("1")}}}}
		}, []wantErr{req("spec.metrics[0].external.metric.name"), forb("spec.metrics[0].external.target.value")}},
		{"behavior", func(h *autoscalingv2.HorizontalPodAutoscaler) {
			h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
				StabilizationWindowSeconds: ptr.To[int32](3601), SelectPolicy: ptr.To[autoscalingv2.ScalingPolicySelect]("Most"),
				Policies:  []autoscalingv2.HPAScalingPolicy{{Type: "Nodes", Value: 0, PeriodSeconds: 1801}},
				Tolerance: q("-1"),
			}, ScaleDown: &autoscalingv2.HPAScalingRules{}}
		}, []wantErr{inv("spec.behavior.scaleUp.stabilizationWindowSeconds"), unsupp("spec.behavior.scaleUp.selectPolicy"),
			unsupp("spec.behavior.scaleUp.policies[0].type"), inv("spec.behavior.scaleUp.policies[0].value"),
			inv("spec.behavior.scaleUp.policies[0].periodSeconds"), inv("spec.behavior.scaleUp.tolerance"),
			req("spec.behavior.scaleDown.policies")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, HPAStrategy{}.Validate(ctx, hpa(tt.mutate)), tt.want...)
		})
	}
}

func TestValidateHPAUpdate(t *testing.T) {
	old := hpa(func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.APIVersion = "v1" })
	// An unchanged kind and apiVersion are not checked again.
	checkErrs(t, HPAStrategy{}.ValidateUpdate(ctx, old.DeepCopy(), old))
	changed := old.DeepCopy()
	changed.Spec.ScaleTargetRef.Kind = "StatefulSet"
	checkErrs(t, HPAStrategy{}.ValidateUpdate(ctx, changed, old), inv("spec.scaleTargetRef.apiVersion"))
}

func TestHPAPrepare(t *testing.T) {
	h := hpa(func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Status.CurrentReplicas = 3 })
	HPAStrategy{}.PrepareForCreate(ctx, h)
	if h.Status.CurrentReplicas != 0 || h.Generation != 1 {
		t.Fatalf("after create: %+v generation %d", h.Status, h.Generation)
	}
	h.Status.CurrentReplicas = 2
	updated := h.DeepCopy()
	updated.Status.CurrentReplicas = 9
	HPAStrategy{}.PrepareForUpdate(ctx, updated, h)
	if updated.Status.CurrentReplicas != 2 || updated.Generation != 1 {
		t.Fatalf("update without spec change: %+v generation %d", updated.Status, updated.Generation)
	}
	updated.Spec.MaxReplicas = 7
	HPAStrategy{}.PrepareForUpdate(ctx, updated, h)
	if updated.Generation != 2 {
		t.Fatalf("generation = %d after a spec change", updated.Generation)
	}
	status := h.DeepCopy()
	status.Spec.MaxReplicas, status.Status.DesiredReplicas = 9, -1
	HPAStatusStrategy{}.PrepareForUpdate(ctx, status, h)
	if status.Spec.MaxReplicas != 5 {
		t.Fatalf("status update changed the spec")
	}
	checkErrs(t, HPAStatusStrategy{}.ValidateUpdate(ctx, status, h), inv("status.desiredReplicas"))
}

func TestHPADefaultDropsV1Annotations(t *testing.T) {
	h := hpa(nil)
	h.Annotations = map[string]string{convert.HPAMetricSpecsAnnotation: "[]", "a": "b"}
	HPAStrategy{}.Default(h)
	if len(h.Annotations) != 1 || h.Annotations["a"] != "b" {
		t.Fatalf("annotations = %v", h.Annotations)
	}
}

func v1HPA() *autoscalingv1.HorizontalPodAutoscaler {
	h := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: "ns"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"},
			MaxReplicas:    5, TargetCPUUtilizationPercentage: ptr.To[int32](50),
		},
	}
	HPAV1Strategy{}.Default(h)
	return h
}

func TestHPAV1Strategy(t *testing.T) {
	h := v1HPA()
	if *h.Spec.MinReplicas != 1 {
		t.Fatalf("minReplicas = %v", h.Spec.MinReplicas)
	}
	h.Annotations = map[string]string{convert.HPAConditionsAnnotation: `[{"type":"AbleToScale","status":"True"}]`}
	h.Status.CurrentReplicas = 4
	HPAV1Strategy{}.PrepareForCreate(ctx, h)
	if len(h.Annotations) != 0 || h.Status.CurrentReplicas != 0 || h.Generation != 1 {
		t.Fatalf("create kept the status: %v %+v", h.Annotations, h.Status)
	}
	checkErrs(t, HPAV1Strategy{}.Validate(ctx, h))

	// The v2 paths of errors, as kube reports them for v1 requests too.
	bad := v1HPA()
	bad.Spec.TargetCPUUtilizationPercentage = ptr.To[int32](0)
	checkErrs(t, HPAV1Strategy{}.Validate(ctx, bad), inv("spec.metrics[0].resource.target.averageUtilization"))

	old := v1HPA()
	old.Generation = 3
	old.Status.CurrentReplicas = 2
	old.Annotations = map[string]string{convert.HPAConditionsAnnotation: `[]`}
	upd := old.DeepCopy()
	upd.Status.CurrentReplicas = 7
	upd.Annotations = map[string]string{convert.HPABehaviorSpecsAnnotation: `{"ScaleUp":{"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":10}]}}`}
	HPAV1Strategy{}.PrepareForUpdate(ctx, upd, old)
	if upd.Status.CurrentReplicas != 2 || upd.Annotations[convert.HPAConditionsAnnotation] != "[]" || upd.Generation != 4 {
		t.Fatalf("update: status %+v annotations %v generation %d", upd.Status, upd.Annotations, upd.Generation)
	}

	status := old.DeepCopy()
	status.Spec.MaxReplicas = 1
	status.Annotations = map[string]string{convert.HPAMetricSpecsAnnotation: `[]`}
	HPAV1StatusStrategy{}.PrepareForUpdate(ctx, status, old)
	if status.Spec.MaxReplicas != 5 || status.Annotations[convert.HPAMetricSpecsAnnotation] != "" {
		t.Fatalf("status update changed the spec: %+v %v", status.Spec, status.Annotations)
	}
	status.Status.DesiredReplicas = -1
	checkErrs(t, HPAV1StatusStrategy{}.ValidateUpdate(ctx, status, old), inv("status.desiredReplicas"))
}

func TestAnnotationsFrom(t *testing.T) {
	in := map[string]string{"a": "1", "k": "x"}
	if out := annotationsFrom(in, map[string]string{"k": "x"}, []string{"k"}); out["k"] != "x" || len(out) != 2 {
		t.Fatalf("unchanged: %v", out)
	}
	out := annotationsFrom(in, nil, []string{"k"})
	if _, ok := out["k"]; ok || in["k"] != "x" {
		t.Fatalf("removal: %v, input %v", out, in)
	}
	out = annotationsFrom(nil, map[string]string{"k": "y"}, []string{"k", "z"})
	if out["k"] != "y" || len(out) != 1 {
		t.Fatalf("from nil: %v", out)
	}
}
