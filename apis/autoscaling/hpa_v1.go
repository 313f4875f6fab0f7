package autoscaling

import (
	"context"
	"maps"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/convert"
	"github.com/capstan-io/capstan/registry"
)

// HPAV1Strategy is the strategy of autoscaling/v1 horizontalpodautoscalers.
// A v1 autoscaler is a v2 one (it is stored as v2) whose v2-only fields sit
// in annotations, so it is validated as the v2 autoscaler it converts to,
// and the annotations that stand for the status or the spec follow the
// status or the spec.
type HPAV1Strategy struct{}

var (
	_ registry.Strategy  = HPAV1Strategy{}
	_ registry.Defaulter = HPAV1Strategy{}
)

// NamespaceScoped is true.
func (HPAV1Strategy) NamespaceScoped() bool { return true }

// Default sets one minimum replica; the CPU target of an autoscaler without
// metrics is set by the conversion to v2, which sees the annotations.
func (HPAV1Strategy) Default(obj runtime.Object) {
	h := obj.(*autoscalingv1.HorizontalPodAutoscaler)
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = ptr.To[int32](1)
	}
}

// PrepareForCreate clears the status, with the annotations that carry it,
// and starts the generation at 1.
func (HPAV1Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	h := obj.(*autoscalingv1.HorizontalPodAutoscaler)
	h.Status = autoscalingv1.HorizontalPodAutoscalerStatus{}
	h.Annotations = annotationsFrom(h.Annotations, nil, convert.HPAStatusAnnotations)
	h.Generation = 1
}

// PrepareForUpdate keeps the status of old, with its annotations, and bumps
// the generation when the v2 spec changed.
func (HPAV1Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	h, oldH := obj.(*autoscalingv1.HorizontalPodAutoscaler), old.(*autoscalingv1.HorizontalPodAutoscaler)
	h.Status = oldH.Status
	h.Annotations = annotationsFrom(h.Annotations, oldH.Annotations, convert.HPAStatusAnnotations)
	if !apiequality.Semantic.DeepEqual(toV2(h).Spec, toV2(oldH).Spec) {
		h.Generation = oldH.Generation + 1
	}
}

// Validate validates the v2 autoscaler of a new v1 one.
func (HPAV1Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateHPASpec(toV2(obj.(*autoscalingv1.HorizontalPodAutoscaler)), nil)
}

// ValidateUpdate validates the v2 autoscalers of an update.
func (HPAV1Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateHPASpec(toV2(obj.(*autoscalingv1.HorizontalPodAutoscaler)), toV2(old.(*autoscalingv1.HorizontalPodAutoscaler)))
}

// HPAV1StatusStrategy is the strategy of autoscaling/v1
// horizontalpodautoscalers/status.
type HPAV1StatusStrategy struct{ HPAV1Strategy }

// PrepareForUpdate keeps the spec of old, with the annotations that carry it.
func (HPAV1StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	h, oldH := obj.(*autoscalingv1.HorizontalPodAutoscaler), old.(*autoscalingv1.HorizontalPodAutoscaler)
	h.Spec = oldH.Spec
	h.Annotations = annotationsFrom(h.Annotations, oldH.Annotations, convert.HPASpecAnnotations)
}

// ValidateUpdate validates the status of the v2 autoscaler.
func (HPAV1StatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateHPAStatus(&toV2(obj.(*autoscalingv1.HorizontalPodAutoscaler)).Status)
}

// toV2 is the v2 autoscaler h stands for.
func toV2(h *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{}
	// The conversion fails only on values JSON cannot encode, which the
	// decoded annotations of a request cannot hold.
	_ = convert.HPAToV2(h, out)
	return out
}

// annotationsFrom returns annotations with the keys set as in from (removed
// where from lacks them). It returns annotations itself when nothing changes.
func annotationsFrom(annotations, from map[string]string, keys []string) map[string]string {
	out := annotations
	copied := false
	for _, k := range keys {
		v, inFrom := from[k]
		cur, inOut := out[k]
		if inFrom == inOut && v == cur {
			continue
		}
		if !copied {
			out, copied = maps.Clone(annotations), true
			if out == nil {
				out = map[string]string{}
			}
		}
		if inFrom {
			out[k] = v
		} else {
			delete(out, k)
		}
	}
	return out
}
