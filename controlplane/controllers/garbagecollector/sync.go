package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/util/retry"
)

func (c *Controller) client(n *node) metadata.ResourceInterface {
	return c.metadata.Resource(*n.gvr).Namespace(n.namespace())
}

// current reads n from the server; it returns nil when n is gone (or was
// replaced by an object of the same name).
func (c *Controller) current(ctx context.Context, n *node) (*metav1.PartialObjectMetadata, error) {
	m, err := c.client(n).Get(ctx, n.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case m.UID != n.uid():
		return nil, nil
	}
	return m, nil
}

// attemptToDelete examines one object: it finishes a foreground deletion,
// deletes an object whose owners are all gone or waiting for it, and drops
// references to gone owners from an object that still has one.
func (c *Controller) attemptToDelete(ctx context.Context, uid types.UID) error {
	n := c.graph.node(uid)
	if n == nil {
		return nil
	}
	// Being deleted is a one-way trip: its dependents are looked at once it
	// is gone.
	if n.deleting() && !n.foreground() {
		return nil
	}
	if !n.foreground() && c.graph.solidOwners(n, n.owners()) {
		return nil
	}
	latest, err := c.current(ctx, n)
	if err != nil || latest == nil {
		return err
	}
	if latest.DeletionTimestamp != nil && slices.Contains(latest.Finalizers, metav1.FinalizerDeleteDependents) {
		return c.finishForeground(ctx, n)
	}
	refs := latest.OwnerReferences
	if len(refs) == 0 {
		return nil
	}
	solid, dangling, waiting, err := c.classify(ctx, n, refs)
	if err != nil {
		return err
	}
	switch {
	case len(solid) > 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		// References to owners waiting in the foreground go too, or those
		// owners would wait for this object for ever.
		drop := append(uids(dangling), uids(waiting)...)
		return c.dropOwnerReferences(ctx, n, drop)
	case len(waiting) > 0 && c.hasDependents(n):
		deps, _ := c.graph.validDependents(n)
		for _, d := range deps {
			if d.foreground() {
				// An owner and a dependent both wait in the foreground: a
				// cycle may be forming, so this object stops blocking its
				// owners before it is deleted.
				if err := c.unblockOwners(ctx, n); err != nil {
					return err
				}
				break
			}
		}
		return c.deleteObject(ctx, n, latest, metav1.DeletePropagationForeground)
	default:
		policy := metav1.DeletePropagationBackground
		switch {
		case slices.Contains(latest.Finalizers, metav1.FinalizerOrphanDependents):
			policy = metav1.DeletePropagationOrphan
		case slices.Contains(latest.Finalizers, metav1.FinalizerDeleteDependents):
			policy = metav1.DeletePropagationForeground
		}
		return c.deleteObject(ctx, n, latest, policy)
	}
}

func (c *Controller) hasDependents(n *node) bool {
	deps, _ := c.graph.validDependents(n)
	return len(deps) > 0
}

func uids(refs []metav1.OwnerReference) []types.UID {
	out := make([]types.UID, len(refs))
	for i, r := range refs {
		out[i] = r.UID
	}
	return out
}

// classify sorts the owner references of n: solid (the owner exists and is
// not deleting its dependents in the foreground), dangling (no such owner,
// in n's namespace for a namespaced kind) and waiting (the owner waits in
// the foreground for its dependents).
func (c *Controller) classify(ctx context.Context, n *node, refs []metav1.OwnerReference) (solid, dangling, waiting []metav1.OwnerReference, err error) {
	for _, ref := range refs {
		owner, err := c.owner(ctx, n, ref)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case owner == nil:
			dangling = append(dangling, ref)
		case owner.DeletionTimestamp != nil && slices.Contains(owner.Finalizers, metav1.FinalizerDeleteDependents):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	return solid, dangling, waiting, nil
}

// owner reads the owner a reference of n names, nil if there is none with
// the reference's UID.
func (c *Controller) owner(ctx context.Context, n *node, ref metav1.OwnerReference) (*metav1.PartialObjectMetadata, error) {
	m, err := c.lookup(ref.APIVersion, ref.Kind)
	if err != nil {
		return nil, err
	}
	ns := ""
	if m.namespaced {
		if n.namespace() == "" {
			return nil, fmt.Errorf("%w: %s %s/%s", errInvalidOwner, ref.Kind, n.gvr.Resource, n.name)
		}
		ns = n.namespace()
	}
	owner, err := c.metadata.Resource(m.gvr).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case owner.UID != ref.UID:
		return nil, nil
	}
	return owner, nil
}

// deleteObject deletes n, provided it still has the UID and, unless only
// unrelated fields changed, the resourceVersion it was judged at.
func (c *Controller) deleteObject(ctx context.Context, n *node, latest *metav1.PartialObjectMetadata, policy metav1.DeletionPropagation) error {
	c.logger.Debug("deleting", "resource", n.gvr.String(), "namespace", n.namespace(), "name", n.name, "propagationPolicy", policy)
	rv, uid := latest.ResourceVersion, n.uid()
	opts := metav1.DeleteOptions{PropagationPolicy: &policy,
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
	err := c.client(n).Delete(ctx, n.name, opts)
	if apierrors.IsConflict(err) {
		now, err := c.current(ctx, n)
		if err != nil || now == nil {
			return err
		}
		if !reflect.DeepEqual(now.OwnerReferences, latest.OwnerReferences) {
			// Judged on stale references: look again.
			c.toDelete.Add(n.uid())
			return nil
		}
		opts.Preconditions.ResourceVersion = nil
		err = c.client(n).Delete(ctx, n.name, opts)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// finishForeground ends the foreground deletion of owner once no dependent
// blocks it, else makes sure its blocking dependents are being deleted.
func (c *Controller) finishForeground(ctx context.Context, owner *node) error {
	_, blocking := c.graph.validDependents(owner)
	if len(blocking) == 0 {
		return c.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
	}
	for _, d := range blocking {
		if !d.foreground() {
			c.toDelete.Add(d.uid())
		}
	}
	return nil
}

// attemptToOrphan removes an owner deleted with the orphan policy from the
// references of its dependents, then its orphan finalizer.
func (c *Controller) attemptToOrphan(ctx context.Context, uid types.UID) error {
	owner := c.graph.node(uid)
	if owner == nil {
		return nil
	}
	deps, _ := c.graph.validDependents(owner)
	var errs []error
	for _, d := range deps {
		if err := c.dropOwnerReferences(ctx, d, []types.UID{uid}); err != nil {
			errs = append(errs, fmt.Errorf("orphaning %s %s/%s: %w", d.gvr.Resource, d.namespace(), d.name, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("orphaning the dependents of %s %s/%s: %v", owner.gvr.Resource, owner.namespace(), owner.name, errs)
	}
	return c.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}

// patchMeta reads n, lets change edit its metadata (false: nothing to do)
// and writes the result as a merge patch at the read resourceVersion,
// retrying on conflicts.
func (c *Controller) patchMeta(ctx context.Context, n *node, change func(m *metav1.PartialObjectMetadata) (map[string]any, bool)) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		m, err := c.current(ctx, n)
		if err != nil || m == nil {
			return err
		}
		fields, ok := change(m)
		if !ok {
			return nil
		}
		fields["resourceVersion"] = m.ResourceVersion
		body, err := json.Marshal(map[string]any{"metadata": fields})
		if err != nil {
			return err
		}
		_, err = c.client(n).Patch(ctx, n.name, types.MergePatchType, body, metav1.PatchOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// dropOwnerReferences removes the references to owners from n.
func (c *Controller) dropOwnerReferences(ctx context.Context, n *node, owners []types.UID) error {
	return c.patchMeta(ctx, n, func(m *metav1.PartialObjectMetadata) (map[string]any, bool) {
		var keep []metav1.OwnerReference
		for _, ref := range m.OwnerReferences {
			if !slices.Contains(owners, ref.UID) {
				keep = append(keep, ref)
			}
		}
		if len(keep) == len(m.OwnerReferences) {
			return nil, false
		}
		return map[string]any{"ownerReferences": keep}, true
	})
}

// unblockOwners sets blockOwnerDeletion to false on every reference of n.
func (c *Controller) unblockOwners(ctx context.Context, n *node) error {
	return c.patchMeta(ctx, n, func(m *metav1.PartialObjectMetadata) (map[string]any, bool) {
		refs := slices.Clone(m.OwnerReferences)
		changed := false
		for i := range refs {
			if refs[i].BlockOwnerDeletion != nil && *refs[i].BlockOwnerDeletion {
				no := false
				refs[i].BlockOwnerDeletion = &no
				changed = true
			}
		}
		return map[string]any{"ownerReferences": refs}, changed
	})
}

// removeFinalizer removes finalizer from n; removing the last one of an
// object being deleted deletes it.
func (c *Controller) removeFinalizer(ctx context.Context, n *node, finalizer string) error {
	return c.patchMeta(ctx, n, func(m *metav1.PartialObjectMetadata) (map[string]any, bool) {
		if !slices.Contains(m.Finalizers, finalizer) {
			return nil, false
		}
		keep := slices.DeleteFunc(slices.Clone(m.Finalizers), func(f string) bool { return f == finalizer })
		if keep == nil {
			keep = []string{}
		}
		return map[string]any{"finalizers": keep}, true
	})
}
