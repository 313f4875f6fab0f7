package apps

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// ReplicaSetStrategy is the strategy of the replicasets resource.
type ReplicaSetStrategy struct {
	// Policy is --allow-privileged.
	Policy core.PodPolicy
}

var (
	_ registry.Strategy         = ReplicaSetStrategy{}
	_ registry.Defaulter        = ReplicaSetStrategy{}
	_ registry.FieldSelectable  = ReplicaSetStrategy{}
	_ registry.WarningsOnCreate = ReplicaSetStrategy{}
)

// NamespaceScoped is true.
func (ReplicaSetStrategy) NamespaceScoped() bool { return true }

// Default sets one replica and the pod template defaults.
func (ReplicaSetStrategy) Default(obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptr.To[int32](1)
	}
	core.DefaultPodTemplateSpec(&rs.Spec.Template)
}

// PrepareForCreate clears the status and starts the generation at 1.
func (ReplicaSetStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	rs.Status = appsv1.ReplicaSetStatus{}
	rs.Generation = 1
}

// PrepareForUpdate keeps the status and bumps the generation when the spec
// changed.
func (ReplicaSetStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	rs, oldRS := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	rs.Status = oldRS.Status
	registry.CountSpecChange(rs, oldRS, &rs.Spec, &oldRS.Spec)
}

// Validate validates a new replica set.
func (s ReplicaSetStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	spec := &obj.(*appsv1.ReplicaSet).Spec
	return append(ValidateReplicaSetSpec(spec, field.NewPath("spec")), s.Policy.ValidateTemplate(&spec.Template, specTemplate)...)
}

// ValidateUpdate validates an update of the main resource.
func (s ReplicaSetStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	rs := obj.(*appsv1.ReplicaSet)
	return append(ValidateReplicaSetUpdate(rs, old.(*appsv1.ReplicaSet)), s.Policy.ValidateTemplate(&rs.Spec.Template, specTemplate)...)
}

// WarningsOnCreate warns about a name that is not a DNS label.
func (ReplicaSetStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return podNameWarnings(obj.(*appsv1.ReplicaSet).Name)
}

// Fields returns status.replicas, the one replica set field selector beyond
// metadata.
func (ReplicaSetStrategy) Fields(obj runtime.Object) fields.Set {
	rs := obj.(*appsv1.ReplicaSet)
	return fields.Set{"status.replicas": strconv.Itoa(int(rs.Status.Replicas))}
}

// ReplicaSetStatusStrategy is the strategy of replicasets/status: an update
// changes the status only.
type ReplicaSetStatusStrategy struct{ ReplicaSetStrategy }

// PrepareForUpdate keeps the spec of old.
func (ReplicaSetStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*appsv1.ReplicaSet).Spec = old.(*appsv1.ReplicaSet).Spec
}

// ValidateUpdate validates the new status.
func (ReplicaSetStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateReplicaSetStatus(&obj.(*appsv1.ReplicaSet).Status, field.NewPath("status"))
}
