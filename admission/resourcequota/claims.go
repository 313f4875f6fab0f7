package resourcequota

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
)

// claims charge storage, per storage class too.
type claims struct{ generic }

const storageClassSuffix = ".storageclass.storage.k8s.io/"

func (c claims) tracks(n corev1.ResourceName) bool {
	if c.generic.tracks(n) || n == corev1.ResourceRequestsStorage {
		return true
	}
	_, rest, ok := strings.Cut(string(n), storageClassSuffix)
	return ok && (rest == string(corev1.ResourceRequestsStorage) || rest == string(corev1.ResourcePersistentVolumeClaims))
}

// handles creates and updates of the claim, and the status writes kube
// recharges: every one, as kube compares the allocated sizes by address.
func (claims) handles(a *admission.Attributes) bool {
	switch a.Subresource {
	case "":
		return a.Operation == admission.Create || a.Operation == admission.Update
	case "status":
		return a.Operation == admission.Update
	}
	return false
}

func (c claims) usage(obj runtime.Object) (corev1.ResourceList, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T", obj)
	}
	out, _ := c.generic.usage(obj)
	class := claimClass(pvc)
	if class != "" {
		out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourcePersistentVolumeClaims))] = one
	}
	if req, ok := claimStorage(pvc); ok {
		out[corev1.ResourceRequestsStorage] = req
		if class != "" {
			out[corev1.ResourceName(class+storageClassSuffix+string(corev1.ResourceRequestsStorage))] = req
		}
	}
	return out, nil
}

// claimClass is kube's class of a claim: the beta annotation first.
func claimClass(pvc *corev1.PersistentVolumeClaim) string {
	if a, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return a
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// claimStorage is the storage a claim holds: its request, or what was
// allocated when that is more (a failed expansion), in whole bytes.
func claimStorage(pvc *corev1.PersistentVolumeClaim) (resource.Quantity, bool) {
	req, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok {
		return resource.Quantity{}, false
	}
	if alloc, ok := pvc.Status.AllocatedResources[corev1.ResourceStorage]; ok && alloc.Cmp(req) > 0 {
		req = alloc
	}
	req = req.DeepCopy()
	req.RoundUp(0)
	return req, true
}

// matchesScope: claims have the VolumeAttributesClass scope, matched
// against every class the claim names (spec, current and target).
func (claims) matchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return false, fmt.Errorf("unexpected object %T", obj)
	}
	if sel.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
		return false, nil
	}
	names := attributesClasses(pvc)
	if sel.Operator == corev1.ScopeSelectorOpExists {
		return len(names) > 0, nil
	}
	s, err := scopeSelector(sel)
	if err != nil {
		return false, err
	}
	if len(names) == 0 {
		return s.Matches(labels.Set{}), nil
	}
	for _, n := range names {
		if s.Matches(labels.Set{string(corev1.ResourceQuotaScopeVolumeAttributesClass): n}) {
			return true, nil
		}
	}
	return false, nil
}

func attributesClasses(pvc *corev1.PersistentVolumeClaim) []string {
	var names []string
	add := func(n string) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if pvc.Spec.VolumeAttributesClassName != nil {
		add(*pvc.Spec.VolumeAttributesClassName)
	}
	if pvc.Status.CurrentVolumeAttributesClassName != nil {
		add(*pvc.Status.CurrentVolumeAttributesClassName)
	}
	if m := pvc.Status.ModifyVolumeStatus; m != nil {
		add(m.TargetVolumeAttributesClassName)
	}
	return names
}
