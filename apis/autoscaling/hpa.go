// Package autoscaling holds the strategies of autoscaling's
// HorizontalPodAutoscalers, served as autoscaling/v2 (the stored version) and
// autoscaling/v1.
package autoscaling

import (
	"context"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/convert"
	"github.com/capstan-io/capstan/registry"
)

// HPAStrategy is the strategy of autoscaling/v2 horizontalpodautoscalers.
type HPAStrategy struct{}

var (
	_ registry.Strategy  = HPAStrategy{}
	_ registry.Defaulter = HPAStrategy{}
)

// NamespaceScoped is true.
func (HPAStrategy) NamespaceScoped() bool { return true }

// Default applies kube's v2 defaults (one minimum replica, an 80% CPU
// target, the scaling rules of a behavior) and drops the annotations
// autoscaling/v1 keeps v2's fields in: kube drops them whenever it converts
// a v2 object, so a v2 client can neither set nor see them.
func (HPAStrategy) Default(obj runtime.Object) {
	h := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	convert.DefaultHPAV2(h)
	h.Annotations = convert.DropHPARoundTripAnnotations(h.Annotations)
}

// PrepareForCreate clears the status and starts the generation at 1 (kube's
// HPAGeneration gate is on in 1.37).
func (HPAStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	h := obj.(*autoscalingv2.HorizontalPodAutoscaler)
	h.Status = autoscalingv2.HorizontalPodAutoscalerStatus{}
	h.Generation = 1
}

// PrepareForUpdate keeps the status and bumps the generation when the spec
// changed.
func (HPAStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	h, oldH := obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler)
	h.Status = oldH.Status
	registry.CountSpecChange(h, oldH, &h.Spec, &oldH.Spec)
}

// Validate validates a new autoscaler.
func (HPAStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateHPASpec(obj.(*autoscalingv2.HorizontalPodAutoscaler), nil)
}

// ValidateUpdate validates an updated autoscaler against the rules of a new
// one, relaxed where old was already accepted.
func (HPAStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateHPASpec(obj.(*autoscalingv2.HorizontalPodAutoscaler), old.(*autoscalingv2.HorizontalPodAutoscaler))
}

// HPAStatusStrategy is the strategy of horizontalpodautoscalers/status.
type HPAStatusStrategy struct{ HPAStrategy }

// PrepareForUpdate keeps the spec of old.
func (HPAStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*autoscalingv2.HorizontalPodAutoscaler).Spec = old.(*autoscalingv2.HorizontalPodAutoscaler).Spec
}

// ValidateUpdate validates the new status.
func (HPAStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateHPAStatus(&obj.(*autoscalingv2.HorizontalPodAutoscaler).Status)
}
