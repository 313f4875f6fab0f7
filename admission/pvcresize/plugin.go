// Package pvcresize is kube's PersistentVolumeClaimResize plugin: a claim
// may grow only when it is bound and its storage class allows volume
// expansion.
package pvcresize

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/capstan-io/capstan/admission"
)

// Getter reads a storage class by name.
type Getter func(ctx context.Context, name string) (*storagev1.StorageClass, error)

// Plugin is the PersistentVolumeClaimResize plugin.
type Plugin struct {
	classes Getter
}

// New returns the plugin reading classes.
func New(classes Getter) *Plugin { return &Plugin{classes: classes} }

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles updates.
func (*Plugin) Handles(op admission.Operation) bool { return op == admission.Update }

// Validate refuses a claim's growth, with kube's messages, unless the
// claim is bound and its class (the same before and after) allows it.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource().String() != "persistentvolumeclaims" || a.Subresource != "" {
		return nil
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	old, oldOK := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok || !oldOK {
		return nil
	}
	newSize, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if newSize.Cmp(oldSize) <= 0 {
		return nil
	}
	if old.Status.Phase != corev1.ClaimBound {
		return admission.NewForbidden(a, errors.New("Only bound persistent volume claims can be expanded"))
	}
	if !p.allowed(ctx, pvc, old) {
		return admission.NewForbidden(a, errors.New("only dynamically provisioned pvc can be resized and "+
			"the storageclass that provisions the pvc must support resize"))
	}
	return nil
}

func (p *Plugin) allowed(ctx context.Context, pvc, old *corev1.PersistentVolumeClaim) bool {
	class := ClassOf(pvc)
	if class == "" || class != ClassOf(old) {
		return false
	}
	sc, err := p.classes(ctx, class)
	if err != nil {
		return false
	}
	return sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}

// ClassOf is a claim's storage class as kube reads it: the beta annotation
// first, then spec.storageClassName.
func ClassOf(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}
