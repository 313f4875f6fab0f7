package apps

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// DaemonSetStrategy is the strategy of the daemonsets resource.
//
// kube keeps a template generation, bumped on every template change, in its
// internal spec and shows it in apps/v1 as the annotation
// deprecated.daemonset.template.generation. capstan keeps it in that
// annotation only; the server owns it as kube does.
type DaemonSetStrategy struct {
	// Policy is --allow-privileged.
	Policy core.PodPolicy
}

var (
	_ registry.Strategy  = DaemonSetStrategy{}
	_ registry.Defaulter = DaemonSetStrategy{}
)

// NamespaceScoped is true.
func (DaemonSetStrategy) NamespaceScoped() bool { return true }

// Default applies kube's apps/v1 defaults: a rolling update of one
// unavailable pod and no surge, ten revisions kept, and the pod template
// defaults.
func (DaemonSetStrategy) Default(obj runtime.Object) {
	spec := &obj.(*appsv1.DaemonSet).Spec
	us := &spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if us.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if us.RollingUpdate.MaxSurge == nil {
			us.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	core.DefaultPodTemplateSpec(&spec.Template)
}

// PrepareForCreate clears the status, starts the generation at 1 and the
// template generation at 1 unless the client gave a higher one.
func (DaemonSetStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ds := obj.(*appsv1.DaemonSet)
	ds.Status = appsv1.DaemonSetStatus{}
	ds.Generation = 1
	setTemplateGeneration(ds, max(TemplateGeneration(ds), 1))
}

// PrepareForUpdate keeps the status and the template generation of old. A
// template change bumps both the template generation and the generation;
// another spec change bumps the generation only.
func (DaemonSetStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ds, oldDS := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	ds.Status = oldDS.Status
	tg := TemplateGeneration(oldDS)
	switch {
	case !apiequality.Semantic.DeepEqual(ds.Spec.Template, oldDS.Spec.Template):
		tg++
		ds.Generation = oldDS.Generation + 1
	case !apiequality.Semantic.DeepEqual(ds.Spec, oldDS.Spec):
		ds.Generation = oldDS.Generation + 1
	}
	setTemplateGeneration(ds, tg)
}

// Validate validates a new daemon set.
func (s DaemonSetStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	spec := &obj.(*appsv1.DaemonSet).Spec
	return append(ValidateDaemonSetSpec(spec, field.NewPath("spec"), false), s.Policy.ValidateTemplate(&spec.Template, specTemplate)...)
}

// ValidateUpdate validates an update of the main resource.
func (s DaemonSetStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ds := obj.(*appsv1.DaemonSet)
	return append(ValidateDaemonSetUpdate(ds, old.(*appsv1.DaemonSet)), s.Policy.ValidateTemplate(&ds.Spec.Template, specTemplate)...)
}

// TemplateGeneration returns the template generation of ds, 0 when it has
// none.
func TemplateGeneration(ds *appsv1.DaemonSet) int64 {
	n, err := strconv.ParseInt(ds.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func setTemplateGeneration(ds *appsv1.DaemonSet, n int64) {
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(n, 10)
}

// DaemonSetStatusStrategy is the strategy of daemonsets/status: an update
// changes the status only.
type DaemonSetStatusStrategy struct{ DaemonSetStrategy }

// PrepareForUpdate keeps the spec and the template generation of old.
func (DaemonSetStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ds, oldDS := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	ds.Spec = oldDS.Spec
	setTemplateGeneration(ds, TemplateGeneration(oldDS))
}

// ValidateUpdate validates the new status.
func (DaemonSetStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateDaemonSetStatusUpdate(obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet))
}
