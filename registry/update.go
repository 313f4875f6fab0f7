package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// DeleteOnUpdater is implemented by strategies that decide themselves
// whether an update that removes the last finalizer deletes the object
// (namespaces look at spec.finalizers).
type DeleteOnUpdater interface {
	ShouldDeleteDuringUpdate(obj, old runtime.Object) bool
}

// errDeleteAfterUpdate aborts the storage update of an object whose update
// emptied its finalizers while it is being deleted: it is deleted instead.
var errDeleteAfterUpdate = errors.New("update finalizes the deletion")

// Update replaces an object, or creates it where that is allowed.
func (s *Store) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	key, err := s.objectKey(ctx, name)
	if err != nil {
		return nil, false, err
	}
	u := &updateAttempt{s: s, name: name, info: objInfo, createValidation: createValidation,
		updateValidation: updateValidation, allowCreate: forceAllowCreate || s.allowCreateOnUpdate()}
	if isDryRun(opts.DryRun) {
		return u.dryRun(ctx, key)
	}
	if u.allowCreate {
		s.notifyMayCreate()
	}
	out := s.newFunc()
	err = s.storage.GuaranteedUpdate(ctx, key, out, true, u.preconditions(), u.try(ctx), nil)
	if errors.Is(err, errDeleteAfterUpdate) {
		return s.deleteFinalized(ctx, key, name, u.lastRV)
	}
	if err != nil {
		return nil, false, s.interpretError(err, name)
	}
	s.defaultObject(out)
	return out, u.created, nil
}

// updateAttempt is one Update: the storage may call its try function more
// than once when a concurrent write wins the race.
type updateAttempt struct {
	s                *Store
	name             string
	info             rest.UpdatedObjectInfo
	createValidation rest.ValidateObjectFunc
	updateValidation rest.ValidateObjectUpdateFunc
	allowCreate      bool
	created          bool   // the last try created the object
	lastRV           uint64 // the revision the last try saw
}

// preconditions are those objInfo names, if any.
func (u *updateAttempt) preconditions() *storage.Preconditions {
	p, ok := u.info.(rest.Preconditioner)
	if !ok {
		return nil
	}
	if mp := p.Preconditions(); mp != nil {
		return &storage.Preconditions{UID: mp.UID, ResourceVersion: mp.ResourceVersion}
	}
	return nil
}

func (u *updateAttempt) try(ctx context.Context) storage.UpdateFunc {
	return func(existing runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		u.lastRV = res.ResourceVersion
		if res.ResourceVersion == 0 {
			obj, err := u.create(ctx)
			if err != nil {
				return nil, nil, err
			}
			ttl := u.s.ttlOf(obj)
			return obj, &ttl, nil
		}
		obj, err := u.update(ctx, existing, res.ResourceVersion)
		return obj, nil, err
	}
}

func (u *updateAttempt) create(ctx context.Context) (runtime.Object, error) {
	u.created = false
	if !u.allowCreate {
		return nil, apierrors.NewNotFound(u.s.resource, u.name)
	}
	obj, err := u.info.UpdatedObject(ctx, nil)
	if err != nil {
		return nil, err
	}
	if m, err := meta.Accessor(obj); err == nil && m.GetResourceVersion() != "" {
		// Updating a missing object at a given version cannot succeed.
		return nil, apierrors.NewNotFound(u.s.resource, u.name)
	}
	if err := u.s.beforeCreate(ctx, obj); err != nil {
		return nil, err
	}
	if u.createValidation != nil {
		if err := u.createValidation(ctx, obj); err != nil {
			return nil, err
		}
	}
	u.created = true
	return obj, nil
}

func (u *updateAttempt) update(ctx context.Context, existing runtime.Object, existingRV uint64) (runtime.Object, error) {
	u.created = false
	u.s.defaultObject(existing)
	obj, err := u.info.UpdatedObject(ctx, existing)
	if err != nil {
		return nil, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	rv := m.GetResourceVersion()
	switch {
	case rv == "" && !u.s.allowUnconditionalUpdate():
		// kube names the resource, not the kind, in this one message.
		gk := schema.GroupKind{Group: u.s.resource.Group, Kind: u.s.resource.Resource}
		return nil, apierrors.NewInvalid(gk, u.name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
	case rv == "":
		// An unconditional update applies to the current object.
		m.SetResourceVersion(strconv.FormatUint(existingRV, 10))
	default:
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", rv))
		}
		if n != existingRV {
			return nil, apierrors.NewConflict(u.s.resource, u.name, errors.New(conflictMessage))
		}
	}
	if err := u.s.beforeUpdate(ctx, obj, existing); err != nil {
		return nil, err
	}
	if u.updateValidation != nil {
		// Admission only reads obj and existing: no copies of them (two
		// full objects per update, a CRD's schemas included).
		if err := u.updateValidation(ctx, obj, existing); err != nil {
			return nil, err
		}
	}
	if u.s.shouldDeleteDuringUpdate(obj, existing) {
		return nil, errDeleteAfterUpdate
	}
	return obj, nil
}

// dryRun computes the update against the current object without writing.
func (u *updateAttempt) dryRun(ctx context.Context, key string) (runtime.Object, bool, error) {
	existing := u.s.newFunc()
	err := u.s.storage.Get(ctx, key, storage.GetOptions{IgnoreNotFound: true}, existing)
	if err != nil {
		return nil, false, u.s.interpretError(err, u.name)
	}
	if err := u.preconditions().Check(key, existing); err != nil {
		return nil, false, u.s.interpretError(err, u.name)
	}
	var rv uint64
	if m, err := meta.Accessor(existing); err == nil && m.GetResourceVersion() != "" {
		rv, _ = strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	}
	obj, _, err := u.try(ctx)(existing, storage.ResponseMeta{ResourceVersion: rv})
	if errors.Is(err, errDeleteAfterUpdate) {
		return existing, false, nil
	}
	if err != nil {
		return nil, false, u.s.interpretError(err, u.name)
	}
	return obj, u.created, nil
}

func (s *Store) allowUnconditionalUpdate() bool {
	u, ok := s.strategy.(UnconditionalUpdater)
	return !ok || u.AllowUnconditionalUpdate()
}

func (s *Store) allowCreateOnUpdate() bool {
	c, ok := s.strategy.(CreateOnUpdater)
	return ok && c.AllowCreateOnUpdate()
}

// shouldDeleteDuringUpdate: an object marked for deletion whose update
// removed its last finalizer is deleted now.
func (s *Store) shouldDeleteDuringUpdate(obj, old runtime.Object) bool {
	if d, ok := s.strategy.(DeleteOnUpdater); ok {
		return d.ShouldDeleteDuringUpdate(obj, old)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	oldMeta, _ := meta.Accessor(old)
	return m.GetDeletionTimestamp() != nil && len(m.GetFinalizers()) == 0 && len(oldMeta.GetFinalizers()) > 0
}

// deleteFinalized deletes an object whose finalizers are gone, if it is
// still at the revision the update saw.
func (s *Store) deleteFinalized(ctx context.Context, key, name string, rv uint64) (runtime.Object, bool, error) {
	out := s.newFunc()
	rvs := strconv.FormatUint(rv, 10)
	err := s.storage.Delete(ctx, key, out, &storage.Preconditions{ResourceVersion: &rvs}, nil, nil)
	if err != nil {
		return nil, false, s.interpretError(err, name)
	}
	return out, false, nil
}
