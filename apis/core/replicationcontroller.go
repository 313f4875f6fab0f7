package core

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

// ReplicationControllerStrategy is the strategy of the
// replicationcontrollers resource.
type ReplicationControllerStrategy struct {
	// Policy is --allow-privileged.
	Policy PodPolicy
}

var (
	_ registry.Strategy                   = ReplicationControllerStrategy{}
	_ registry.Defaulter                  = ReplicationControllerStrategy{}
	_ registry.FieldSelectable            = ReplicationControllerStrategy{}
	_ registry.WarningsOnCreate           = ReplicationControllerStrategy{}
	_ registry.GarbageCollectionDefaulter = ReplicationControllerStrategy{}
)

// NamespaceScoped is true.
func (ReplicationControllerStrategy) NamespaceScoped() bool { return true }

// Default applies kube's defaults: one replica; the selector, and the
// controller's own labels, from the template's labels when empty; the pod
// spec defaults in the template.
func (ReplicationControllerStrategy) Default(obj runtime.Object) {
	rc := obj.(*corev1.ReplicationController)
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = t.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = t.Labels
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptr[int32](1)
	}
	if rc.Spec.Template != nil {
		DefaultPodTemplateSpec(rc.Spec.Template)
	}
}

// PrepareForCreate resets the status and sets generation 1.
func (ReplicationControllerStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	rc := obj.(*corev1.ReplicationController)
	rc.Status = corev1.ReplicationControllerStatus{}
	rc.Generation = 1
}

// PrepareForUpdate keeps the status and bumps the generation when the spec
// changed.
func (ReplicationControllerStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	rc, oldRC := obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController)
	rc.Status = oldRC.Status
	if !equality.Semantic.DeepEqual(rc.Spec, oldRC.Spec) {
		rc.Generation = oldRC.Generation + 1
	}
}

// Validate validates a new replication controller.
func (s ReplicationControllerStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validate(obj)
}

// ValidateUpdate validates the new spec: any change is allowed.
func (s ReplicationControllerStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return s.validate(obj)
}

func (s ReplicationControllerStrategy) validate(obj runtime.Object) field.ErrorList {
	spec, path := &obj.(*corev1.ReplicationController).Spec, field.NewPath("spec")
	return append(ValidateReplicationControllerSpec(spec, path), s.Policy.ValidateTemplate(spec.Template, path.Child("template"))...)
}

// WarningsOnCreate warns of a name that is no DNS label: pod names and
// hostnames are made from it.
func (ReplicationControllerStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return dnsLabelNameWarning(obj.(*corev1.ReplicationController).Name, "this is used in Pod names and hostnames")
}

// Fields returns status.replicas, the one field selector beyond metadata.
func (ReplicationControllerStrategy) Fields(obj runtime.Object) fields.Set {
	rc := obj.(*corev1.ReplicationController)
	return fields.Set{"status.replicas": strconv.Itoa(int(rc.Status.Replicas))}
}

// ReplicationControllerStatusStrategy is the strategy of
// replicationcontrollers/status.
type ReplicationControllerStatusStrategy struct{ ReplicationControllerStrategy }

// PrepareForUpdate keeps the spec of old.
func (ReplicationControllerStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.ReplicationController).Spec = old.(*corev1.ReplicationController).Spec
}

// ValidateUpdate validates the new status.
func (ReplicationControllerStatusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateReplicationControllerStatus(obj.(*corev1.ReplicationController).Status, field.NewPath("status"))
}

// ValidateReplicationControllerSpec checks replicas and minReadySeconds,
// that the selector is not empty and selects the template's labels, and
// the template, whose pods must restart Always and have no deadline.
func ValidateReplicationControllerSpec(spec *corev1.ReplicationControllerSpec, fldPath *field.Path) field.ErrorList {
	errs := apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))
	if labels.Set(spec.Selector).AsSelector().Empty() {
		errs = append(errs, field.Required(fldPath.Child("selector"), ""))
	}
	if spec.Replicas == nil {
		errs = append(errs, field.Required(fldPath.Child("replicas"), ""))
	} else {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*spec.Replicas), fldPath.Child("replicas"))...)
	}
	tPath := fldPath.Child("template")
	t := spec.Template
	if t == nil {
		return append(errs, field.Required(tPath, ""))
	}
	if sel := labels.Set(spec.Selector).AsSelector(); !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(tPath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, ValidatePodTemplateSpec(t, tPath)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tPath.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tPath.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// ValidateReplicationControllerStatus requires non-negative counts, none
// above status.replicas, and no more available than ready replicas.
func ValidateReplicationControllerStatus(s corev1.ReplicationControllerStatus, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"replicas", int64(s.Replicas)}, {"fullyLabeledReplicas", int64(s.FullyLabeledReplicas)},
		{"readyReplicas", int64(s.ReadyReplicas)}, {"availableReplicas", int64(s.AvailableReplicas)},
		{"observedGeneration", s.ObservedGeneration},
	} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(f.value, fldPath.Child(f.name))...)
	}
	const msg = "cannot be greater than status.replicas"
	if s.FullyLabeledReplicas > s.Replicas {
		errs = append(errs, field.Invalid(fldPath.Child("fullyLabeledReplicas"), s.FullyLabeledReplicas, msg))
	}
	if s.ReadyReplicas > s.Replicas {
		errs = append(errs, field.Invalid(fldPath.Child("readyReplicas"), s.ReadyReplicas, msg))
	}
	if s.AvailableReplicas > s.Replicas {
		errs = append(errs, field.Invalid(fldPath.Child("availableReplicas"), s.AvailableReplicas, msg))
	}
	if s.AvailableReplicas > s.ReadyReplicas {
		errs = append(errs, field.Invalid(fldPath.Child("availableReplicas"), s.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return errs
}

// DefaultGarbageCollectionPolicy is kube's: a delete through core/v1 orphans
// the controller's pods unless told otherwise, for the clients that predate
// the garbage collector; a delete from inside the server (no group version)
// deletes them.
func (ReplicationControllerStrategy) DefaultGarbageCollectionPolicy(ctx context.Context) registry.GarbageCollectionPolicy {
	return OrphanThroughVersion(ctx, corev1.SchemeGroupVersion)
}

// OrphanThroughVersion is OrphanDependents for a request through gv and
// DeleteDependents otherwise: the default of resources whose old API
// orphaned dependents.
func OrphanThroughVersion(ctx context.Context, gv schema.GroupVersion) registry.GarbageCollectionPolicy {
	if info, ok := request.InfoFrom(ctx); ok && info.APIGroup == gv.Group && info.APIVersion == gv.Version {
		return registry.OrphanDependents
	}
	return registry.DeleteDependents
}
