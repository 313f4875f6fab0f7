package printers

import (
	"fmt"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var autoscalingConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"): New(hpaColumns, hpaV2Row),
	autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"): New(hpaColumns, hpaV1Row),
}

var hpaColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Reference", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["scaleTargetRef"]),
	column("Targets", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["metrics"]),
	column("MinPods", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["minReplicas"]),
	column("MaxPods", "string", autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()["maxReplicas"]),
	column("Replicas", "string", autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]),
	ageColumn(),
}

func hpaV2Row(h *autoscalingv2.HorizontalPodAutoscaler, now time.Time) (metav1.TableRow, error) {
	ref := h.Spec.ScaleTargetRef
	return hpaRow(h.ObjectMeta, ref.Kind+"/"+ref.Name, hpaTargets(h.Spec.Metrics, h.Status.CurrentMetrics),
		h.Spec.MinReplicas, h.Spec.MaxReplicas, h.Status.CurrentReplicas, now)
}

// hpaV1Row prints an autoscaling/v1 HPA with the metrics of autoscaling/v2
// it stands for: its CPU target (80% when it has no metrics at all) and the
// other metrics its annotations carry.
func hpaV1Row(h *autoscalingv1.HorizontalPodAutoscaler, now time.Time) (metav1.TableRow, error) {
	ref := h.Spec.ScaleTargetRef
	specs, statuses := v1Metrics(h)
	return hpaRow(h.ObjectMeta, ref.Kind+"/"+ref.Name, hpaTargets(specs, statuses),
		h.Spec.MinReplicas, h.Spec.MaxReplicas, h.Status.CurrentReplicas, now)
}

func hpaRow(m metav1.ObjectMeta, ref, targets string, min *int32, max, current int32, now time.Time) (metav1.TableRow, error) {
	minPods := "<unset>"
	if min != nil {
		minPods = fmt.Sprintf("%d", *min)
	}
	return rowOf(m.Name, ref, targets, minPods, int64(max), int64(current), since(m.CreationTimestamp, now))
}

// hpaTargets shows "current/target" of the first two metrics and how many
// more there are. A metric's status is the one at the same index.
func hpaTargets(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	list := make([]string, len(specs))
	for i, spec := range specs {
		var status autoscalingv2.MetricStatus
		if i < len(statuses) {
			status = statuses[i]
		}
		list[i] = hpaTarget(spec, status)
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

// hpaTarget shows one metric; a nil Quantity prints as "<nil>", as kube's
// does.
func hpaTarget(spec autoscalingv2.MetricSpec, status autoscalingv2.MetricStatus) string {
	switch {
	case spec.Type == autoscalingv2.ExternalMetricSourceType && spec.External != nil:
		var current *autoscalingv2.MetricValueStatus
		if status.External != nil {
			current = &status.External.Current
		}
		return valueTarget(spec.External.Target, current)
	case spec.Type == autoscalingv2.PodsMetricSourceType && spec.Pods != nil:
		current := "<unknown>"
		if status.Pods != nil {
			current = status.Pods.Current.AverageValue.String()
		}
		return current + "/" + spec.Pods.Target.AverageValue.String()
	case spec.Type == autoscalingv2.ObjectMetricSourceType && spec.Object != nil:
		var current *autoscalingv2.MetricValueStatus
		if status.Object != nil {
			current = &status.Object.Current
		}
		return valueTarget(spec.Object.Target, current)
	case spec.Type == autoscalingv2.ResourceMetricSourceType && spec.Resource != nil:
		var current *autoscalingv2.MetricValueStatus
		if status.Resource != nil {
			current = &status.Resource.Current
		}
		return string(spec.Resource.Name) + ": " + resourceTarget(spec.Resource.Target, current)
	case spec.Type == autoscalingv2.ContainerResourceMetricSourceType && spec.ContainerResource != nil:
		var current *autoscalingv2.MetricValueStatus
		if status.ContainerResource != nil {
			current = &status.ContainerResource.Current
		}
		return string(spec.ContainerResource.Name) + ": " + resourceTarget(spec.ContainerResource.Target, current)
	}
	return "<unknown type>"
}

// valueTarget shows an object or external metric: its average value, or
// else its value.
func valueTarget(target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	got := "<unknown>"
	if target.AverageValue != nil {
		if current != nil && current.AverageValue != nil {
			got = current.AverageValue.String()
		}
		return got + "/" + target.AverageValue.String() + " (avg)"
	}
	if current != nil {
		got = current.Value.String()
	}
	return got + "/" + target.Value.String()
}

// resourceTarget shows a resource metric: its average value, or else its
// utilization.
func resourceTarget(target autoscalingv2.MetricTarget, current *autoscalingv2.MetricValueStatus) string {
	got := "<unknown>"
	if target.AverageValue != nil {
		if current != nil {
			got = current.AverageValue.String()
		}
		return got + "/" + target.AverageValue.String()
	}
	if current != nil && current.AverageUtilization != nil {
		got = fmt.Sprintf("%d%%", *current.AverageUtilization)
	}
	want := "<auto>"
	if target.AverageUtilization != nil {
		want = fmt.Sprintf("%d%%", *target.AverageUtilization)
	}
	return got + "/" + want
}
