package apps

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// StatefulSetStrategy is the strategy of the statefulsets resource.
type StatefulSetStrategy struct {
	// RecreateStrategy allows the Recreate update strategy, as kube's
	// StatefulSetRecreateStrategy feature gate (alpha, off in 1.37). When
	// false, an update may keep Recreate only if the old object had it.
	RecreateStrategy bool
	// Policy is --allow-privileged.
	Policy core.PodPolicy
}

var (
	_ registry.Strategy         = StatefulSetStrategy{}
	_ registry.Defaulter        = StatefulSetStrategy{}
	_ registry.NameValidator    = StatefulSetStrategy{}
	_ registry.WarningsOnCreate = StatefulSetStrategy{}
	_ registry.WarningsOnUpdate = StatefulSetStrategy{}
)

// NamespaceScoped is true.
func (StatefulSetStrategy) NamespaceScoped() bool { return true }

// ValidateName requires a DNS-1123 label: the name of a stateful set is the
// prefix of its pods' hostnames.
func (StatefulSetStrategy) ValidateName(name string, prefix bool) []string {
	return apivalidation.NameIsDNSLabel(name, prefix)
}

// Default applies kube's apps/v1 defaults: one replica, OrderedReady pod
// management, a rolling update from partition 0 with one pod unavailable
// (MaxUnavailableStatefulSet is on in 1.37), ten revisions kept, claims
// retained, and the defaults of the pod and claim templates.
func (StatefulSetStrategy) Default(obj runtime.Object) {
	spec := &obj.(*appsv1.StatefulSet).Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	us := &spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if us.Type == appsv1.RollingUpdateStatefulSetStrategyType && us.RollingUpdate != nil {
		if us.RollingUpdate.Partition == nil {
			us.RollingUpdate.Partition = ptr.To[int32](0)
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	policy := spec.PersistentVolumeClaimRetentionPolicy
	if policy.WhenDeleted == "" {
		policy.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if policy.WhenScaled == "" {
		policy.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = ptr.To[int32](1)
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	core.DefaultPodTemplateSpec(&spec.Template)
	for i := range spec.VolumeClaimTemplates {
		defaultClaimTemplate(&spec.VolumeClaimTemplates[i])
	}
}

// defaultClaimTemplate applies kube's persistent volume claim defaults to a
// claim template. It also sets apiVersion and kind, which kube always writes
// on the claim templates of apps/v1 objects.
func defaultClaimTemplate(pvc *corev1.PersistentVolumeClaim) {
	pvc.APIVersion, pvc.Kind = "v1", "PersistentVolumeClaim"
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	for _, rl := range []corev1.ResourceList{pvc.Spec.Resources.Limits, pvc.Spec.Resources.Requests, pvc.Status.Capacity, pvc.Status.AllocatedResources} {
		roundUpToMilli(rl)
	}
}

// roundUpToMilli rounds every quantity of rl up to the milli scale, as kube's
// resource list defaulting does.
func roundUpToMilli(rl corev1.ResourceList) {
	for name, q := range rl {
		q.RoundUp(-3)
		rl[name] = q
	}
}

// PrepareForCreate clears the status and starts the generation at 1.
func (StatefulSetStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ss := obj.(*appsv1.StatefulSet)
	ss.Status = appsv1.StatefulSetStatus{}
	ss.Generation = 1
}

// PrepareForUpdate keeps the status and bumps the generation when the spec
// changed.
func (StatefulSetStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ss, oldSS := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	ss.Status = oldSS.Status
	registry.CountSpecChange(ss, oldSS, &ss.Spec, &oldSS.Spec)
}

// Validate validates a new stateful set.
func (s StatefulSetStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	opts := StatefulSetOptions{AllowRecreate: s.RecreateStrategy}
	spec := &obj.(*appsv1.StatefulSet).Spec
	return append(ValidateStatefulSetSpec(spec, field.NewPath("spec"), opts), s.Policy.ValidateTemplate(&spec.Template, specTemplate)...)
}

// ValidateUpdate validates an update of the main resource.
func (s StatefulSetStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ss, oldSS := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	opts := StatefulSetOptions{
		// serviceName and volumeClaimTemplates are immutable: tolerate
		// what older servers accepted.
		AllowInvalidServiceName: true,
		SkipClaimTemplates:      true,
		AllowRecreate:           s.RecreateStrategy || oldSS.Spec.UpdateStrategy.Type == appsv1.RecreateStatefulSetStrategyType,
	}
	return append(ValidateStatefulSetUpdate(ss, oldSS, opts), s.Policy.ValidateTemplate(&ss.Spec.Template, specTemplate)...)
}

// WarningsOnCreate warns about a negative revisionHistoryLimit.
func (StatefulSetStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return revisionHistoryWarnings(obj.(*appsv1.StatefulSet))
}

// WarningsOnUpdate warns about a negative revisionHistoryLimit.
func (StatefulSetStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return revisionHistoryWarnings(obj.(*appsv1.StatefulSet))
}

func revisionHistoryWarnings(ss *appsv1.StatefulSet) []string {
	if l := ss.Spec.RevisionHistoryLimit; l != nil && *l < 0 {
		return []string{"spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"}
	}
	return nil
}

// StatefulSetStatusStrategy is the strategy of statefulsets/status: an
// update changes the status only.
type StatefulSetStatusStrategy struct{ StatefulSetStrategy }

// PrepareForUpdate keeps the spec of old.
func (StatefulSetStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*appsv1.StatefulSet).Spec = old.(*appsv1.StatefulSet).Spec
}

// ValidateUpdate validates the new status.
func (StatefulSetStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateStatefulSetStatusUpdate(obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet))
}

// WarningsOnUpdate has nothing to say about a status update.
func (StatefulSetStatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
