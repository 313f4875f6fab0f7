package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// PodTemplateStrategy is the strategy of the podtemplates resource.
type PodTemplateStrategy struct {
	// Policy is --allow-privileged.
	Policy PodPolicy
}

var (
	_ registry.Strategy  = PodTemplateStrategy{}
	_ registry.Defaulter = PodTemplateStrategy{}
)

// NamespaceScoped is true.
func (PodTemplateStrategy) NamespaceScoped() bool { return true }

// Default applies the pod spec defaults to the template.
func (PodTemplateStrategy) Default(obj runtime.Object) {
	DefaultPodTemplateSpec(&obj.(*corev1.PodTemplate).Template)
}

// PrepareForCreate sets generation 1: a pod template has no status.
func (PodTemplateStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*corev1.PodTemplate).Generation = 1
}

// PrepareForUpdate bumps the generation when the template changed.
func (PodTemplateStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	t, oldT := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
	if !equality.Semantic.DeepEqual(t.Template, oldT.Template) {
		t.Generation = oldT.Generation + 1
	}
}

// Validate validates the template.
func (s PodTemplateStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validate(obj)
}

// ValidateUpdate validates the new template: any change is allowed.
func (s PodTemplateStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return s.validate(obj)
}

func (s PodTemplateStrategy) validate(obj runtime.Object) field.ErrorList {
	t, path := &obj.(*corev1.PodTemplate).Template, field.NewPath("template")
	return append(ValidatePodTemplateSpec(t, path), s.Policy.ValidateTemplate(t, path)...)
}
