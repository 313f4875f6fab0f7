package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// ConfigMapStrategy is the strategy of the configmaps resource.
type ConfigMapStrategy struct{}

var (
	_ registry.Strategy  = ConfigMapStrategy{}
	_ registry.Defaulter = ConfigMapStrategy{}
)

// NamespaceScoped is true.
func (ConfigMapStrategy) NamespaceScoped() bool { return true }

// Default makes data an empty map when missing, as kube's scheme defaulting
// does, so that nil and empty data compare equal everywhere.
func (ConfigMapStrategy) Default(obj runtime.Object) {
	cm := obj.(*corev1.ConfigMap)
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
}

// PrepareForCreate does nothing: a configmap has no status.
func (ConfigMapStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: a configmap has no status.
func (ConfigMapStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new configmap.
func (ConfigMapStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateConfigMap(obj.(*corev1.ConfigMap))
}

// ValidateUpdate adds the rules of immutable configmaps to Validate.
func (ConfigMapStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateConfigMapUpdate(obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap))
}
