package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/storage"
)

// ServiceREST is the REST storage of services: the generic Store, with
// the cluster IPs and node ports of a service allocated around its writes.
// Allocation happens before the Store validates and writes, as in kube, so
// that validation sees the allocated values; what a failed write allocated
// is released, and releases an update implies wait for its success. Dry
// runs allocate nothing.
type ServiceREST struct {
	*registry.Store
	alloc *ServiceAllocators
}

var (
	_ rest.Creater           = (*ServiceREST)(nil)
	_ rest.Updater           = (*ServiceREST)(nil)
	_ rest.GracefulDeleter   = (*ServiceREST)(nil)
	_ rest.CollectionDeleter = (*ServiceREST)(nil)
	_ rest.Getter            = (*ServiceREST)(nil)
	_ rest.Lister            = (*ServiceREST)(nil)
	_ rest.ResponseLister    = (*ServiceREST)(nil)
)

// NewServiceREST wraps the services Store.
func NewServiceREST(store *registry.Store, alloc *ServiceAllocators) *ServiceREST {
	return &ServiceREST{Store: store, alloc: alloc}
}

// Status returns the REST storage of services/status.
func (r *ServiceREST) Status() *ServiceStatusREST {
	return &ServiceStatusREST{SubresourceStore: r.Store.Subresource(ServiceStatusStrategy{}), store: r.Store, alloc: r.alloc}
}

// generatedNameAttempts bounds the retries of a create whose generated
// name is taken, as the Store's own retries do.
const generatedNameAttempts = 8

// Create allocates a new service's cluster IPs and node ports, then stores
// it; a failed write releases them.
func (r *ServiceREST) Create(ctx context.Context, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	in := obj.(*corev1.Service)
	generated := in.Name == "" && in.GenerateName != ""
	for attempt := 1; ; attempt++ {
		svc := in.DeepCopy()
		if generated {
			svc.Name = generatedName(svc.GenerateName)
		}
		out, err := r.createOnce(ctx, svc, validate, opts)
		if generated && apierrors.IsAlreadyExists(err) && attempt < generatedNameAttempts {
			continue
		}
		return out, err
	}
}

func (r *ServiceREST) createOnce(ctx context.Context, svc *corev1.Service, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	if svc.Name == "" {
		// Nothing to allocate for: the Store refuses the name.
		return r.Store.Create(ctx, svc, validate, opts)
	}
	if svc.Namespace == "" {
		svc.Namespace = request.NamespaceFrom(ctx)
	}
	normalizeClusterIPs(svc, nil)
	txn, err := r.alloc.allocateCreate(ctx, svc, len(opts.DryRun) > 0)
	if err != nil {
		return nil, err
	}
	out, err := r.Store.Create(ctx, svc, validate, opts)
	if err != nil {
		txn.revert()
		return nil, err
	}
	txn.commit()
	r.defaultOnRead(out)
	return out, nil
}

// Update allocates what the updated service needs inside the Store's
// update, so that every retry of a conflicting write allocates against
// the service it replaces; the allocations of a superseded try are undone.
func (r *ServiceREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	dryRun := len(opts.DryRun) > 0
	var txn *allocTxn
	info := rest.KeepPreconditions(objInfo, func(ctx context.Context, old runtime.Object) (runtime.Object, error) {
		txn.revert()
		txn = nil
		obj, err := objInfo.UpdatedObject(ctx, old)
		if err != nil {
			return nil, err
		}
		svc := obj.(*corev1.Service)
		if svc.Namespace == "" {
			svc.Namespace = request.NamespaceFrom(ctx)
		}
		if old == nil {
			normalizeClusterIPs(svc, nil)
			txn, err = r.alloc.allocateCreate(ctx, svc, dryRun)
			return svc, err
		}
		oldSvc := old.(*corev1.Service)
		r.defaultOnRead(oldSvc)
		patchAllocatedValues(svc, oldSvc)
		normalizeClusterIPs(svc, oldSvc)
		txn, err = r.alloc.allocateUpdate(ctx, svc, oldSvc, dryRun)
		return svc, err
	})
	out, created, err := r.Store.Update(ctx, name, info, createValidation, updateValidation, forceAllowCreate, opts)
	if err != nil {
		txn.revert()
		return nil, false, err
	}
	txn.commit()
	r.afterWrite(ctx, out, dryRun)
	return out, created, nil
}

// afterWrite completes a write's result: an update that removed the last
// finalizer of a service being deleted deleted it, so its allocations go.
func (r *ServiceREST) afterWrite(ctx context.Context, out runtime.Object, dryRun bool) {
	svc, ok := out.(*corev1.Service)
	if !ok {
		return
	}
	if !dryRun {
		releaseIfDeleted(ctx, r.Store, r.alloc, svc)
	}
	r.defaultOnRead(svc)
}

// releaseIfDeleted releases the allocations of a service an update
// deleted: one being deleted whose last finalizer the update removed. The
// Store then answers with the deleted object, which still lists the
// finalizer, so the service is looked for.
func releaseIfDeleted(ctx context.Context, store *registry.Store, alloc *ServiceAllocators, svc *corev1.Service) {
	if svc.DeletionTimestamp == nil {
		return
	}
	cur, err := store.Get(ctx, svc.Name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && cur.(*corev1.Service).UID != svc.UID) {
		alloc.releaseAll(ctx, svc)
	}
}

// Delete deletes a service and releases its cluster IPs and node ports
// once it is gone (not while finalizers hold it).
func (r *ServiceREST) Delete(ctx context.Context, name string, validate rest.ValidateObjectFunc, opts *metav1.DeleteOptions) (runtime.Object, bool, error) {
	out, deleted, err := r.Store.Delete(ctx, name, validate, opts)
	if err != nil {
		return nil, false, err
	}
	if svc, ok := out.(*corev1.Service); ok {
		if deleted && (opts == nil || len(opts.DryRun) == 0) {
			r.alloc.releaseAll(ctx, svc)
		}
		r.defaultOnRead(svc)
	}
	return out, deleted, nil
}

// DeleteCollection deletes the selected services one by one through
// Delete, so that each releases what it held.
func (r *ServiceREST) DeleteCollection(ctx context.Context, validate rest.ValidateObjectFunc, opts *metav1.DeleteOptions, listOpts *rest.ListOptions) (runtime.Object, error) {
	list, err := r.Store.List(ctx, listOpts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var errs []error
	for _, item := range items {
		name := item.(*corev1.Service).Name
		if _, _, err := r.Delete(ctx, name, validate, opts.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	r.defaultOnRead(list)
	return list, nil
}

// DeleteCollectionForResponse is DeleteCollection, with the items in the
// list: the embedded Store's would release nothing.
func (r *ServiceREST) DeleteCollectionForResponse(ctx context.Context, validate rest.ValidateObjectFunc, opts *metav1.DeleteOptions, listOpts *rest.ListOptions) (runtime.Object, storage.ListItems, error) {
	out, err := r.DeleteCollection(ctx, validate, opts, listOpts)
	return out, nil, err
}

// Get reads a service, completing the fields older servers did not set.
func (r *ServiceREST) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	out, err := r.Store.Get(ctx, name, opts)
	if err == nil {
		r.defaultOnRead(out)
	}
	return out, err
}

// GetForResponse is Get: the embedded Store's would skip defaultOnRead.
func (r *ServiceREST) GetForResponse(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	return r.Get(ctx, name, opts)
}

// List lists services, completing the fields older servers did not set.
func (r *ServiceREST) List(ctx context.Context, opts *rest.ListOptions) (runtime.Object, error) {
	out, err := r.Store.List(ctx, opts)
	if err == nil {
		r.defaultOnRead(out)
	}
	return out, err
}

// ListForResponse is List, with the items in the list: the embedded
// Store's would skip defaultOnRead.
func (r *ServiceREST) ListForResponse(ctx context.Context, opts *rest.ListOptions) (runtime.Object, storage.ListItems, error) {
	out, err := r.List(ctx, opts)
	return out, nil, err
}

// ServiceStatusREST is services/status: the status subresource, which also
// releases the allocations of a service whose last finalizer it removed.
type ServiceStatusREST struct {
	*registry.SubresourceStore
	store *registry.Store
	alloc *ServiceAllocators
}

// Update updates the status.
func (r *ServiceStatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, opts *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, created, err := r.SubresourceStore.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, opts)
	if err != nil {
		return nil, false, err
	}
	if svc, ok := out.(*corev1.Service); ok && len(opts.DryRun) == 0 {
		releaseIfDeleted(ctx, r.store, r.alloc, svc)
	}
	return out, created, nil
}

// generatedName appends kube's five random characters to a generateName.
func generatedName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return fmt.Sprintf("%s%s", base, rand.String(5))
}
