package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// NamespaceStrategy is the strategy of the namespaces resource.
type NamespaceStrategy struct{}

var (
	_ registry.Strategy        = NamespaceStrategy{}
	_ registry.Defaulter       = NamespaceStrategy{}
	_ registry.NameValidator   = NamespaceStrategy{}
	_ registry.FieldSelectable = NamespaceStrategy{}
	_ registry.Canonicalizer   = NamespaceStrategy{}
)

// NamespaceScoped is false: namespaces are cluster scoped.
func (NamespaceStrategy) NamespaceScoped() bool { return false }

// ValidateName requires a DNS-1123 label: a namespace name becomes a path
// segment and a DNS label in service names.
func (NamespaceStrategy) ValidateName(name string, prefix bool) []string {
	return apivalidation.NameIsDNSLabel(name, prefix)
}

// Default sets the kubernetes.io/metadata.name label and an Active phase,
// as kube's scheme defaulting does.
func (NamespaceStrategy) Default(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	setNameLabel(ns)
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// Canonicalize sets the name label once the name is known. Default cannot do
// it for a namespace created with generateName because the name is chosen
// after defaulting.
func (NamespaceStrategy) Canonicalize(obj runtime.Object) {
	setNameLabel(obj.(*corev1.Namespace))
}

func setNameLabel(ns *corev1.Namespace) {
	if ns.Name == "" {
		return
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

// PrepareForCreate makes a new namespace Active and adds the kubernetes
// finalizer, which the namespace controller removes once the namespace is
// empty. It is not a default because clients may remove it later through the
// finalize subresource.
func (NamespaceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !HasFinalizer(ns, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
}

// PrepareForUpdate keeps status and spec.finalizers: the first changes
// through the status subresource, the second through finalize.
func (NamespaceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec.Finalizers = oldNS.Spec.Finalizers
	ns.Status = oldNS.Status
}

// Validate validates a new namespace.
func (NamespaceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return ValidateNamespace(obj.(*corev1.Namespace))
}

// ValidateUpdate validates an update of the main resource.
func (NamespaceStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return ValidateNamespace(obj.(*corev1.Namespace))
}

// Fields returns status.phase, the one namespace field selector beyond
// metadata.name.
func (NamespaceStrategy) Fields(obj runtime.Object) fields.Set {
	ns := obj.(*corev1.Namespace)
	return fields.Set{"status.phase": string(ns.Status.Phase)}
}

// NamespaceStatusStrategy is the strategy of namespaces/status: an update
// changes status only.
type NamespaceStatusStrategy struct{ NamespaceStrategy }

// PrepareForUpdate keeps the spec of old.
func (NamespaceStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.Namespace).Spec = old.(*corev1.Namespace).Spec
}

// ValidateUpdate checks that the phase agrees with deletionTimestamp.
func (NamespaceStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateNamespaceStatusUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

// NamespaceFinalizeStrategy is the strategy of namespaces/finalize: an update
// changes spec.finalizers only.
type NamespaceFinalizeStrategy struct{ NamespaceStrategy }

// PrepareForUpdate keeps the status of old; the spec holds nothing but
// finalizers.
func (NamespaceFinalizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.Namespace).Status = old.(*corev1.Namespace).Status
}

// ValidateUpdate validates the new finalizer names.
func (NamespaceFinalizeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateNamespaceFinalizeUpdate(obj.(*corev1.Namespace), old.(*corev1.Namespace))
}

// NamespaceDeleting reports whether ns is being deleted: its deletion has been
// requested or its phase is Terminating. Nothing new may be created in such a
// namespace.
func NamespaceDeleting(ns *corev1.Namespace) bool {
	return ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating
}

// HasFinalizer reports whether spec.finalizers of ns holds name.
func HasFinalizer(ns *corev1.Namespace, name corev1.FinalizerName) bool {
	for _, f := range ns.Spec.Finalizers {
		if f == name {
			return true
		}
	}
	return false
}
