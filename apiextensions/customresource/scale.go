package customresource

import (
	"context"
	"fmt"
	"math"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
)

// ScaleREST serves the scale subresource of custom resources: an
// autoscaling/v1 Scale read from, and written back to, the paths the CRD
// version's scale subresource names. Updates go through the main store, so
// the custom resource's strategy validates them (replicas in int32 range).
type ScaleREST struct {
	store              *registry.Store
	specReplicasPath   string
	statusReplicasPath string
	labelSelectorPath  string
	// parentGV and replicasPaths let a write through /scale take
	// ownership of the spec replicas in the custom resource's managed
	// fields, as for built-in kinds.
	parentGV      schema.GroupVersion
	replicasPaths managedfields.ResourcePathMappings
}

var (
	_ rest.Patcher = (*ScaleREST)(nil)
	_ rest.Scoper  = (*ScaleREST)(nil)
)

// NewScaleREST returns the scale subresource of the custom resources of
// store, whose CRD version has the scale subresource scale.
// Managed fields of writes are recorded at parentGV, whose spec replicas,
// like those of every version, are at replicasPaths (see ReplicasPaths).
func NewScaleREST(store *registry.Store, scale *apiextv1.CustomResourceSubresourceScale, parentGV schema.GroupVersion,
	replicasPaths managedfields.ResourcePathMappings) *ScaleREST {
	r := &ScaleREST{store: store, specReplicasPath: scale.SpecReplicasPath, statusReplicasPath: scale.StatusReplicasPath,
		parentGV: parentGV, replicasPaths: replicasPaths}
	if scale.LabelSelectorPath != nil {
		r.labelSelectorPath = *scale.LabelSelectorPath
	}
	return r
}

// New returns an empty Scale.
func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// NamespaceScoped reports the custom resource's scope.
func (r *ScaleREST) NamespaceScoped() bool { return r.store.NamespaceScoped() }

// Get returns the Scale of a custom resource, which must have its spec
// replicas set.
func (r *ScaleREST) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	scale, found, err := r.scaleOf(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !found {
		return nil, apierrors.NewInternalError(fmt.Errorf("the spec replicas field %q does not exist", r.specReplicasPath))
	}
	return scale, nil
}

// unsetReplicas stands for missing spec replicas in the Scale an update
// starts from: an update that leaves it so has not set replicas.
const unsetReplicas = math.MinInt32

// Update sets the spec replicas of a custom resource to those of the
// updated Scale. A resourceVersion in the Scale is a precondition. Admission
// sees Scales, not custom resources.
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	info := rest.UpdatedObjectFunc(func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		if old == nil {
			return nil, apierrors.NewNotFound(r.store.Resource(), name)
		}
		cr, ok := old.DeepCopyObject().(*unstructured.Unstructured)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("expected a custom resource, got %T", old))
		}
		oldScale, found, err := r.scaleOf(cr)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if !found {
			oldScale.Spec.Replicas = unsetReplicas
		}
		replicasOwners := managedfields.NewScaleHandler(cr.GetManagedFields(), r.parentGV, r.replicasPaths)
		if oldScale.ManagedFields, err = replicasOwners.ToSubresource(); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		obj, err := objInfo.UpdatedObject(ctx, oldScale)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			return nil, apierrors.NewBadRequest("nil update passed to Scale")
		}
		scale, ok := obj.(*autoscalingv1.Scale)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("wrong object passed to Scale update: %v", obj))
		}
		if scale.Spec.Replicas == unsetReplicas {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the spec replicas field %q cannot be empty", r.specReplicasPath))
		}
		if err := unstructured.SetNestedField(cr.Object, int64(scale.Spec.Replicas), splitPath(r.specReplicasPath)...); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if scale.ResourceVersion != "" {
			cr.SetResourceVersion(scale.ResourceVersion)
		}
		entries, err := replicasOwners.ToParent(scale.ManagedFields)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		cr.SetManagedFields(entries)
		return cr, nil
	})
	out, _, err := r.store.Update(ctx, name, info, r.createValidation(createValidation), r.updateValidation(updateValidation), false, opts)
	if err != nil {
		return nil, false, err
	}
	scale, _, err := r.scaleOf(out)
	if err != nil {
		return nil, false, apierrors.NewBadRequest(err.Error())
	}
	return scale, false, nil
}

// createValidation makes admission see the Scale of a custom resource.
func (r *ScaleREST) createValidation(f rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		scale, _, err := r.scaleOf(obj)
		if err != nil {
			return err
		}
		return f(ctx, scale)
	}
}

// updateValidation makes admission see the Scales of an update.
func (r *ScaleREST) updateValidation(f rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		scale, _, err := r.scaleOf(obj)
		if err != nil {
			return err
		}
		oldScale, _, err := r.scaleOf(old)
		if err != nil {
			return err
		}
		return f(ctx, scale, oldScale)
	}
}

// scaleOf is the Scale of a custom resource, and whether its spec replicas
// are set. Missing replicas read as 0; values of the wrong type are errors.
func (r *ScaleREST) scaleOf(obj runtime.Object) (*autoscalingv1.Scale, bool, error) {
	cr, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, false, fmt.Errorf("expected a custom resource, got %T", obj)
	}
	return scaleFromCustomResource(cr, r.specReplicasPath, r.statusReplicasPath, r.labelSelectorPath)
}

func scaleFromCustomResource(cr *unstructured.Unstructured, specPath, statusPath, selectorPath string) (*autoscalingv1.Scale, bool, error) {
	content := cr.UnstructuredContent()
	specReplicas, found, err := unstructured.NestedInt64(content, splitPath(specPath)...)
	if err != nil {
		return nil, false, err
	}
	statusReplicas, _, err := unstructured.NestedInt64(content, splitPath(statusPath)...)
	if err != nil {
		return nil, false, err
	}
	var selector string
	if selectorPath != "" {
		if selector, _, err = unstructured.NestedString(content, splitPath(selectorPath)...); err != nil {
			return nil, false, err
		}
	}
	return &autoscalingv1.Scale{
		// The Scale is already in its served version: no conversion needed.
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name: cr.GetName(), Namespace: cr.GetNamespace(), UID: cr.GetUID(),
			ResourceVersion: cr.GetResourceVersion(), CreationTimestamp: cr.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(specReplicas)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(statusReplicas), Selector: selector},
	}, found, nil
}

// splitPath splits a scale path such as ".spec.replicas" into its fields.
func splitPath(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "."), ".")
}

// ReplicasPaths maps each version of a CRD to the path of its spec
// replicas, nil for versions without the scale subresource: the managed
// fields of an entry at such a version are kept as they are.
func ReplicasPaths(crd *apiextv1.CustomResourceDefinition) managedfields.ResourcePathMappings {
	paths := managedfields.ResourcePathMappings{}
	for _, v := range crd.Spec.Versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()
		if v.Subresources == nil || v.Subresources.Scale == nil {
			paths[gv] = nil
			continue
		}
		var path fieldpath.Path
		for _, name := range splitPath(v.Subresources.Scale.SpecReplicasPath) {
			path = append(path, fieldpath.PathElement{FieldName: &name})
		}
		paths[gv] = path
	}
	return paths
}
