package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// LimitRangeStrategy is the strategy of the limitranges resource.
type LimitRangeStrategy struct{}

var (
	_ registry.Strategy        = LimitRangeStrategy{}
	_ registry.Defaulter       = LimitRangeStrategy{}
	_ registry.CreateOnUpdater = LimitRangeStrategy{}
)

// NamespaceScoped is true.
func (LimitRangeStrategy) NamespaceScoped() bool { return true }

// AllowCreateOnUpdate is true, as in kube.
func (LimitRangeStrategy) AllowCreateOnUpdate() bool { return true }

// Default applies kube's limit range defaults.
func (LimitRangeStrategy) Default(obj runtime.Object) { DefaultLimitRange(obj.(*corev1.LimitRange)) }

// DefaultLimitRange fills, for container limits, a missing default limit
// from the max, and a missing default request from the default limit, else
// the min; every quantity is rounded up to milli precision.
func DefaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type == corev1.LimitTypeContainer {
			if item.Default == nil {
				item.Default = corev1.ResourceList{}
			}
			if item.DefaultRequest == nil {
				item.DefaultRequest = corev1.ResourceList{}
			}
			fillMissing(item.Default, item.Max)
			fillMissing(item.DefaultRequest, item.Default)
			fillMissing(item.DefaultRequest, item.Min)
		}
		for _, l := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
			roundResourceList(l)
		}
	}
}

// fillMissing copies into dst the quantities of src it lacks.
func fillMissing(dst, src corev1.ResourceList) {
	for name, q := range src {
		if _, ok := dst[name]; !ok {
			dst[name] = q.DeepCopy()
		}
	}
}

// PrepareForCreate names a limit range that has no name, as kube does.
func (LimitRangeStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	lr := obj.(*corev1.LimitRange)
	if lr.Name == "" {
		lr.Name = string(uuid.NewUUID())
	}
}

// PrepareForUpdate does nothing: a limit range has no status.
func (LimitRangeStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new limit range.
func (LimitRangeStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateLimitRange(obj.(*corev1.LimitRange))
}

// ValidateUpdate validates the new limit range; nothing is immutable.
func (LimitRangeStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateLimitRange(obj.(*corev1.LimitRange))
}
