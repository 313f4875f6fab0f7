package registry

import (
	"context"
	"errors"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry/rest"
)

// ScaleAccessor reads and sets the replicas of a scalable resource.
type ScaleAccessor struct {
	// Get returns the desired and observed replicas and the label selector
	// of obj, in the string form of Scale.status.selector.
	Get func(obj runtime.Object) (replicas, statusReplicas int32, selector string, err error)
	// Set sets the desired replicas of obj.
	Set func(obj runtime.Object, replicas int32) error

	// GroupVersion is the parent's API version that managed fields of
	// writes through /scale are recorded at in the parent.
	GroupVersion schema.GroupVersion
	// ReplicasPaths maps each API version the parent's managed fields may
	// be recorded at to the path of its desired replicas. With them, the
	// Scale shows who manages the replicas, and a write through /scale
	// takes ownership of them in the parent (kube's ScaleHandler); without
	// them managed fields are left alone.
	ReplicasPaths managedfields.ResourcePathMappings
}

// ScaleStore serves the scale subresource: an autoscaling/v1 Scale view of
// the parent object, whose updates change only the parent's replicas.
type ScaleStore struct {
	store    *Store
	accessor ScaleAccessor
}

var (
	_ rest.Getter  = (*ScaleStore)(nil)
	_ rest.Updater = (*ScaleStore)(nil)
)

// Scale returns the scale subresource of a store.
func (s *Store) Scale(accessor ScaleAccessor) *ScaleStore {
	return &ScaleStore{store: s, accessor: accessor}
}

// New returns an empty Scale.
func (s *ScaleStore) New() runtime.Object { return &autoscalingv1.Scale{} }

// NamespaceScoped reports the parent's scope.
func (s *ScaleStore) NamespaceScoped() bool { return s.store.NamespaceScoped() }

// Get returns the Scale of the parent object.
func (s *ScaleStore) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	obj, err := s.store.Get(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return s.scaleOf(obj)
}

// Update changes the parent's replicas to those of the updated Scale.
func (s *ScaleStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	parentInfo := rest.UpdatedObjectFunc(func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		if old == nil {
			return nil, apierrors.NewNotFound(s.store.resource, name)
		}
		oldScale, err := s.scaleOf(old)
		if err != nil {
			return nil, err
		}
		// Clients never see a Scale's managed fields (as in kube), but the
		// write's field manager works on those of the parent's replicas.
		var replicasOwners *managedfields.ScaleHandler
		if s.accessor.ReplicasPaths != nil {
			m, err := meta.Accessor(old)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			replicasOwners = managedfields.NewScaleHandler(m.GetManagedFields(), s.accessor.GroupVersion, s.accessor.ReplicasPaths)
			if oldScale.ManagedFields, err = replicasOwners.ToSubresource(); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
		obj, err := objInfo.UpdatedObject(ctx, oldScale)
		if err != nil {
			return nil, err
		}
		scale, ok := obj.(*autoscalingv1.Scale)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("expected an autoscaling/v1 Scale, got %T", obj))
		}
		if err := s.validate(scale, oldScale); err != nil {
			return nil, err
		}
		parent := old.DeepCopyObject()
		if err := s.accessor.Set(parent, scale.Spec.Replicas); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		m, err := meta.Accessor(parent)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		m.SetResourceVersion(scale.ResourceVersion)
		if replicasOwners != nil {
			entries, err := replicasOwners.ToParent(scale.ManagedFields)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			m.SetManagedFields(entries)
		}
		return parent, nil
	})
	out, _, err := s.store.Update(ctx, name, parentInfo, nil, updateValidation, false, opts)
	if err != nil {
		return nil, false, err
	}
	scale, err := s.scaleOf(out)
	return scale, false, err
}

func (s *ScaleStore) validate(scale, old *autoscalingv1.Scale) error {
	var errs field.ErrorList
	if scale.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "replicas"), scale.Spec.Replicas, "must be greater than or equal to 0"))
	}
	if scale.Name != old.Name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", scale.Name, old.Name))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: autoscalingv1.GroupName, Kind: "Scale"}, scale.Name, errs)
	}
	return nil
}

// scaleOf is the Scale view of a parent object.
func (s *ScaleStore) scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	replicas, statusReplicas, selector, err := s.accessor.Get(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(errors.Join(errors.New("reading scale"), err))
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: replicas},
		Status: autoscalingv1.ScaleStatus{Replicas: statusReplicas, Selector: selector},
	}, nil
}
