package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry"
)

var (
	_ registry.DeletionHolder  = NamespaceStrategy{}
	_ registry.DeleteOnUpdater = NamespaceStrategy{}
)

// HoldForDeletion turns a namespace with spec.finalizers Terminating and
// keeps it until the namespace controller has emptied it and finalized it.
func (NamespaceStrategy) HoldForDeletion(obj runtime.Object) bool {
	ns := obj.(*corev1.Namespace)
	if len(ns.Spec.Finalizers) == 0 {
		return false
	}
	ns.Status.Phase = corev1.NamespaceTerminating
	return true
}

// ShouldDeleteDuringUpdate deletes a terminating namespace once both its
// spec.finalizers and metadata.finalizers are empty.
func (NamespaceStrategy) ShouldDeleteDuringUpdate(obj, _ runtime.Object) bool {
	ns := obj.(*corev1.Namespace)
	return ns.DeletionTimestamp != nil && len(ns.Spec.Finalizers) == 0 && len(ns.Finalizers) == 0
}
