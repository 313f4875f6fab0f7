package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// DeletionHolder is implemented by strategies whose objects are held on
// delete by more than metadata.finalizers: a namespace waits for its
// spec.finalizers and turns Terminating. Hold marks obj and reports whether
// it must stay until finalized.
type DeletionHolder interface {
	HoldForDeletion(obj runtime.Object) bool
}

// Delete deletes an object, or marks it for deletion while finalizers hold it.
func (s *Store) Delete(ctx context.Context, name string, validate rest.ValidateObjectFunc, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	key, err := s.objectKey(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	s.warnOnDelete(ctx, opts)
	existing := s.newFunc()
	if err := s.storage.Get(ctx, key, storage.GetOptions{}, existing); err != nil {
		return nil, false, s.interpretError(err, name)
	}
	pre := preconditionsOf(opts)
	if err := s.checkPreconditions(name, existing, pre); err != nil {
		return nil, false, err
	}
	if validate != nil {
		if err := validate(ctx, existing.DeepCopyObject()); err != nil {
			return nil, false, err
		}
	}
	grace := s.gracePeriod(ctx, existing, opts)
	m, err := meta.Accessor(existing)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	_, gcChange := s.garbageCollectionFinalizers(ctx, m, opts)
	if grace > 0 || gcChange || s.holds(existing.DeepCopyObject()) {
		obj, err := s.markForDeletion(ctx, key, name, existing, pre, opts, grace)
		if !errors.Is(err, errDeleteNow) {
			return obj, false, err
		}
	}
	if isDryRun(opts.DryRun) {
		return s.deleteResult(existing), true, nil
	}
	out := s.newFunc()
	if err := s.storage.Delete(ctx, key, out, pre, s.validateDeletion(validate, existing), existing); err != nil {
		return nil, false, s.interpretError(err, name)
	}
	return s.deleteResult(out), true, nil
}

// errDeleteNow aborts the marking of an object that nothing holds any more
// (a delete with propagationPolicy Background took away the last, garbage
// collector's, finalizer): it is deleted instead, as in kube.
var errDeleteNow = errors.New("delete now")

// holds reports whether obj waits for finalizers rather than going at once.
func (s *Store) holds(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if len(m.GetFinalizers()) > 0 {
		return true
	}
	h, ok := s.strategy.(DeletionHolder)
	return ok && h.HoldForDeletion(obj)
}

// gracefulPending reports whether m is in a graceful deletion that this
// delete does not shorten: its garbage collection finalizers then stay as
// they are, whatever the options say, as in kube.
func (s *Store) gracefulPending(m metav1.Object, grace int64) bool {
	if _, ok := s.strategy.(GracefulDeleter); !ok || m.GetDeletionTimestamp() == nil {
		return false
	}
	old := m.GetDeletionGracePeriodSeconds()
	return old != nil && *old > 0 && grace >= *old
}

// markForDeletion sets deletionTimestamp on an object that finalizers hold,
// after adding or removing the garbage collector's finalizers as opts say.
// An object already marked keeps its deletionTimestamp.
// A graceful deletion sets deletionTimestamp grace seconds ahead; a later
// delete may shorten the grace period but never lengthen it. It returns
// errDeleteNow when nothing holds the object any more.
func (s *Store) markForDeletion(ctx context.Context, key, name string, existing runtime.Object,
	pre *storage.Preconditions, opts *metav1.DeleteOptions, grace int64) (runtime.Object, error) {
	mark := func(obj runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, err
		}
		if !s.gracefulPending(m, grace) {
			if fins, changed := s.garbageCollectionFinalizers(ctx, m, opts); changed {
				m.SetFinalizers(fins)
			}
		}
		if grace == 0 && !s.holds(obj.DeepCopyObject()) {
			return nil, nil, errDeleteNow
		}
		if old := m.GetDeletionGracePeriodSeconds(); m.GetDeletionTimestamp() == nil || (old != nil && grace < *old) {
			if _, holder := s.strategy.(DeletionHolder); m.GetDeletionTimestamp() == nil && m.GetGeneration() > 0 && !holder {
				// The first mark is a change controllers must see, as kube
				// bumps generation here.
				m.SetGeneration(m.GetGeneration() + 1)
			}
			at := metav1.NewTime(metav1.Now().Add(time.Duration(grace) * time.Second))
			m.SetDeletionTimestamp(&at)
			m.SetDeletionGracePeriodSeconds(&grace)
		}
		if h, ok := s.strategy.(DeletionHolder); ok {
			h.HoldForDeletion(obj)
		}
		return obj, nil, nil
	}
	if isDryRun(opts.DryRun) {
		obj, _, err := mark(existing.DeepCopyObject(), storage.ResponseMeta{})
		return obj, err
	}
	out := s.newFunc()
	if err := s.storage.GuaranteedUpdate(ctx, key, out, false, pre, mark, existing); err != nil {
		if errors.Is(err, errDeleteNow) {
			return nil, err
		}
		return nil, s.interpretError(err, name)
	}
	return out, nil
}

// GracefulDeleter is implemented by strategies of resources deleted after
// a grace period (pods). It returns the grace period in seconds the object
// gets, from the options or the object; 0 deletes at once.
type GracefulDeleter interface {
	GracePeriod(ctx context.Context, obj runtime.Object, opts *metav1.DeleteOptions) int64
}

func (s *Store) gracePeriod(ctx context.Context, obj runtime.Object, opts *metav1.DeleteOptions) int64 {
	g, ok := s.strategy.(GracefulDeleter)
	if !ok {
		return 0
	}
	return g.GracePeriod(ctx, obj, opts)
}

// deleteResult is what DELETE answers: the object for resources that return
// it, else a Status naming what was deleted.
func (s *Store) deleteResult(obj runtime.Object) runtime.Object {
	if s.returnsObj {
		return obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	return &metav1.Status{
		Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name:  m.GetName(),
			Group: s.resource.Group,
			Kind:  s.resource.Resource, // kube puts the resource here
			UID:   m.GetUID(),
		},
	}
}

// validateDeletion admits the object storage deletes, unless it is the
// version checked already: admission (webhooks included) runs once per
// object deleted, as in kube, and again only for an object that changed
// in between.
func (s *Store) validateDeletion(validate rest.ValidateObjectFunc, checked runtime.Object) storage.ValidateObjectFunc {
	if validate == nil {
		return nil
	}
	checkedRV := ""
	if m, err := meta.Accessor(checked); err == nil {
		checkedRV = m.GetResourceVersion()
	}
	return func(ctx context.Context, obj runtime.Object) error {
		if m, err := meta.Accessor(obj); err == nil && checkedRV != "" && m.GetResourceVersion() == checkedRV {
			return nil
		}
		return validate(ctx, obj)
	}
}

func preconditionsOf(opts *metav1.DeleteOptions) *storage.Preconditions {
	if opts.Preconditions == nil {
		return nil
	}
	return &storage.Preconditions{UID: opts.Preconditions.UID, ResourceVersion: opts.Preconditions.ResourceVersion}
}

// checkPreconditions answers a failed precondition with kube's 409 before
// anything is written.
func (s *Store) checkPreconditions(name string, obj runtime.Object, pre *storage.Preconditions) error {
	if pre == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	// kube's early check names the kind, not the resource.
	gr := schema.GroupResource{Group: s.resource.Group, Resource: s.kind}
	if pre.UID != nil && *pre.UID != m.GetUID() {
		return apierrors.NewConflict(gr, name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, m.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(gr, name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// DeleteCollection deletes every object the list options select and
// answers with the list of them, as listed before the deletion.
func (s *Store) DeleteCollection(ctx context.Context, validate rest.ValidateObjectFunc, opts *metav1.DeleteOptions, listOpts *rest.ListOptions) (runtime.Object, error) {
	list, items, err := s.DeleteCollectionForResponse(ctx, validate, opts, listOpts)
	if err != nil || items == nil {
		return list, err
	}
	all := make([]runtime.Object, items.Len())
	for i := range all {
		item, err := items.At(i)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		// Items are the cache's, read only: the caller's list may be changed.
		all[i] = item.DeepCopyObject()
	}
	if err := meta.SetList(list, all); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return list, nil
}

// DeleteCollectionForResponse is DeleteCollection, with the listed objects
// as the watch cache hands them over (see ListForResponse): the names to
// delete are read from their keys, so that no object is decoded for the
// deletion but by the delete of it, one at a time: a large list decoded
// at once would hold every object decoded at the same time.
func (s *Store) DeleteCollectionForResponse(ctx context.Context, validate rest.ValidateObjectFunc, opts *metav1.DeleteOptions, listOpts *rest.ListOptions) (runtime.Object, storage.ListItems, error) {
	s.warnOnDelete(ctx, opts)
	list, items, err := s.ListForResponse(ctx, listOpts)
	if err != nil {
		return nil, nil, err
	}
	names, err := listedNames(list, items)
	if err != nil {
		return nil, nil, err
	}
	if err := s.deleteNamed(ctx, names, validate, opts); err != nil {
		return nil, nil, err
	}
	return list, items, nil
}

// listedNames returns the names of the objects of list, or of items when
// not nil: the last segment of each one's key, as objectKey makes it.
func listedNames(list runtime.Object, items storage.ListItems) ([]string, error) {
	if items != nil {
		names := make([]string, items.Len())
		for i := range names {
			key := items.Key(i)
			names[i] = key[strings.LastIndexByte(key, '/')+1:]
		}
		return names, nil
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	names := make([]string, len(objs))
	for i, item := range objs {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		names[i] = m.GetName()
	}
	return names, nil
}

// deleteNamed deletes the named objects with the store's collection
// workers.
func (s *Store) deleteNamed(ctx context.Context, names []string, validate rest.ValidateObjectFunc, opts *metav1.DeleteOptions) error {
	// As kube: the first failure stops the deletion (a worker that fails
	// takes no more names, and no more are handed out) and is the answer.
	// Going on would only repeat it, for every name left, once the
	// request's deadline has passed.
	var (
		first   error
		once    sync.Once
		stopped = make(chan struct{})
		next    = make(chan string)
		wg      sync.WaitGroup
	)
	for range min(s.deletion.collectionWorkers(), len(names)) {
		wg.Go(func() {
			for name := range next {
				// Each delete gets its own options: graceful deleters
				// change them.
				if _, _, err := s.Delete(ctx, name, validate, opts.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
					once.Do(func() { first = err; close(stopped) })
					return
				}
			}
		})
	}
send:
	for _, name := range names {
		select {
		case next <- name:
		case <-stopped:
			break send
		}
	}
	close(next)
	wg.Wait()
	return first
}
