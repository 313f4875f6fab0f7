package apps

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// DeploymentStrategy is the strategy of the deployments resource.
type DeploymentStrategy struct {
	// Policy is --allow-privileged.
	Policy core.PodPolicy
}

var (
	_ registry.Strategy         = DeploymentStrategy{}
	_ registry.Defaulter        = DeploymentStrategy{}
	_ registry.WarningsOnCreate = DeploymentStrategy{}
)

// NamespaceScoped is true.
func (DeploymentStrategy) NamespaceScoped() bool { return true }

// Default applies kube's apps/v1 defaults: one replica, a rolling update of
// 25% unavailable and 25% surge, ten old replica sets kept, a progress
// deadline of ten minutes, and the pod template defaults.
func (DeploymentStrategy) Default(obj runtime.Object) {
	d := obj.(*appsv1.Deployment)
	spec := &d.Spec
	if spec.Replicas == nil {
		spec.Replicas = ptr.To[int32](1)
	}
	if spec.Strategy.Type == "" {
		spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if spec.Strategy.RollingUpdate == nil {
			spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		ru := spec.Strategy.RollingUpdate
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptr.To(intstr.FromString("25%"))
		}
		if ru.MaxSurge == nil {
			ru.MaxSurge = ptr.To(intstr.FromString("25%"))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if spec.ProgressDeadlineSeconds == nil {
		spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	}
	core.DefaultPodTemplateSpec(&spec.Template)
}

// PrepareForCreate clears the status and starts the generation at 1.
func (DeploymentStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	d := obj.(*appsv1.Deployment)
	d.Status = appsv1.DeploymentStatus{}
	d.Generation = 1
}

// PrepareForUpdate keeps the status and bumps the generation when the spec
// or the annotations changed: the deployment controller copies annotations
// to its replica sets, so they are desired state too.
func (DeploymentStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	d, oldD := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	d.Status = oldD.Status
	if !apiequality.Semantic.DeepEqual(d.Spec, oldD.Spec) || !apiequality.Semantic.DeepEqual(d.Annotations, oldD.Annotations) {
		d.Generation = oldD.Generation + 1
	}
}

// Validate validates a new deployment.
func (s DeploymentStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	d := obj.(*appsv1.Deployment)
	return append(ValidateDeployment(d), s.Policy.ValidateTemplate(&d.Spec.Template, specTemplate)...)
}

// ValidateUpdate validates an update of the main resource.
func (s DeploymentStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	d := obj.(*appsv1.Deployment)
	return append(ValidateDeploymentUpdate(d, old.(*appsv1.Deployment)), s.Policy.ValidateTemplate(&d.Spec.Template, specTemplate)...)
}

// specTemplate is where the workloads of this group keep their pod template.
var specTemplate = field.NewPath("spec", "template")

// WarningsOnCreate warns about a name that is not a DNS label.
func (DeploymentStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return podNameWarnings(obj.(*appsv1.Deployment).Name)
}

// DeploymentStatusStrategy is the strategy of deployments/status: an update
// changes the status only.
type DeploymentStatusStrategy struct{ DeploymentStrategy }

// PrepareForUpdate keeps the spec and the labels of old, as kube does.
func (DeploymentStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	d, oldD := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
	d.Spec = oldD.Spec
	d.Labels = oldD.Labels
}

// ValidateUpdate validates the new status.
func (DeploymentStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateDeploymentStatusUpdate(obj.(*appsv1.Deployment), old.(*appsv1.Deployment))
}
