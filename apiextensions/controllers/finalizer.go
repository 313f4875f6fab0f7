package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const (
	// instancePollInterval is how often the finalizer looks again for
	// custom resources still going away.
	instancePollInterval = 5 * time.Second
	// instanceWaitTimeout bounds one wait for them; past it the wait is
	// reported as failed and the deletion starts over with backoff.
	instanceWaitTimeout = time.Minute
)

// deletionCompleted is the Terminating condition of a CRD whose custom
// resources are all gone.
var deletionCompleted = apiextv1.CustomResourceDefinitionCondition{
	Type: apiextv1.Terminating, Status: apiextv1.ConditionFalse,
	Reason: "InstanceDeletionCompleted", Message: "removed all instances",
}

// overlappingBuiltIns are the built-in resources whose storage paths a CRD of
// the same group and plural would share: deleting such a CRD must leave
// their objects alone.
var overlappingBuiltIns = map[schema.GroupResource]bool{
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}:             true,
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: true,
}

// finalizerController finishes the deletion of CRDs holding the
// customresourcecleanup finalizer: it deletes their custom resources,
// waits for them to be gone, then removes the finalizer.
//
// The wait does not hold a worker: a CRD whose resources are still going
// away is looked at again every instancePollInterval.
type finalizerController struct {
	*queueLoop
	client  *crdClient
	dynamic dynamic.Interface
	indexer cache.Indexer
	now     func() time.Time
	// instances, when set, saves the lists of a CRD that has no objects.
	instances Instances

	mu sync.Mutex
	// waiting holds, per CRD name, when the controller began waiting for
	// the resources of the CRD with that uid to go away.
	waiting map[string]waitState
}

type waitState struct {
	uid   types.UID
	since time.Time
}

func newFinalizerController(client *crdClient, dyn dynamic.Interface, informer cache.SharedIndexInformer, logger *slog.Logger) (*finalizerController, error) {
	c := &finalizerController{
		queueLoop: newQueueLoop("crd_finalizer", logger),
		client:    client,
		dynamic:   dyn,
		indexer:   informer.GetIndexer(),
		now:       time.Now,
		waiting:   map[string]waitState{},
	}
	c.handle = c.sync
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if crd, ok := crdFrom(obj); ok && needsFinalizing(crd) {
				c.queue.Add(crd.Name)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldCRD, ok1 := crdFrom(oldObj)
			newCRD, ok2 := crdFrom(newObj)
			if ok1 && ok2 && finalizerShouldLook(oldCRD, newCRD) {
				c.queue.Add(newCRD.Name)
			}
		},
	})
	return c, err
}

func needsFinalizing(crd *apiextv1.CustomResourceDefinition) bool {
	return crd.DeletionTimestamp != nil && hasFinalizer(crd, apiextv1.CustomResourceCleanupFinalizer)
}

// finalizerShouldLook reports whether an update concerns the finalizer: the
// CRD is being finalized, and the update is a resync or changes more than
// the Terminating condition (which the finalizer itself writes).
func finalizerShouldLook(oldCRD, newCRD *apiextv1.CustomResourceDefinition) bool {
	if !needsFinalizing(newCRD) {
		return false
	}
	if oldCRD.ResourceVersion == newCRD.ResourceVersion {
		return true
	}
	a, b := statusCopy(oldCRD), statusCopy(newCRD)
	for _, crd := range []*apiextv1.CustomResourceDefinition{a, b} {
		crd.ResourceVersion = ""
		crd.ManagedFields = nil
		removeCondition(crd, apiextv1.Terminating)
	}
	return !reflect.DeepEqual(a, b)
}

func (c *finalizerController) sync(ctx context.Context, name string) (time.Duration, error) {
	cached, ok := getCRD(c.indexer, name)
	if !ok || !needsFinalizing(cached) {
		c.stopWaiting(name)
		return 0, nil
	}
	crd := statusCopy(cached)

	inProgress := apiextv1.CustomResourceDefinitionCondition{
		Type: apiextv1.Terminating, Status: apiextv1.ConditionTrue,
		Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress",
	}
	if !sameCondition(findCondition(crd, apiextv1.Terminating), &inProgress) {
		setCondition(crd, inProgress, metav1.NewTime(c.now()))
		var err error
		crd, err = c.client.UpdateStatus(ctx, crd, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			// The informer will bring the newer state, and the CRD back here.
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}

	var done apiextv1.CustomResourceDefinitionCondition
	switch {
	case overlappingBuiltIns[schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural}]:
		done = apiextv1.CustomResourceDefinitionCondition{
			Type: apiextv1.Terminating, Status: apiextv1.ConditionFalse,
			Reason: "OverlappingBuiltInResource", Message: "instances overlap with built-in resources in storage",
		}
	case conditionTrue(crd, apiextv1.Established):
		cond, retry, err := c.deleteInstances(ctx, crd)
		if retry > 0 {
			return retry, nil
		}
		if err != nil {
			setCondition(crd, cond, metav1.NewTime(c.now()))
			if _, uerr := c.client.UpdateStatus(ctx, crd, metav1.UpdateOptions{}); uerr != nil {
				c.logger.Error("reporting the failed deletion of custom resources", "crd", name, "err", uerr)
			}
			return 0, err
		}
		done = cond
	default:
		done = apiextv1.CustomResourceDefinitionCondition{
			Type: apiextv1.Terminating, Status: apiextv1.ConditionFalse,
			Reason: "NeverEstablished", Message: "resource was never established",
		}
	}

	setCondition(crd, done, metav1.NewTime(c.now()))
	removeFinalizer(crd, apiextv1.CustomResourceCleanupFinalizer)
	updated, err := c.client.UpdateStatus(ctx, crd, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if hasFinalizer(updated, apiextv1.CustomResourceCleanupFinalizer) {
		// The status update kept metadata as it was: remove the finalizer
		// through the main resource.
		removeFinalizer(updated, apiextv1.CustomResourceCleanupFinalizer)
		_, err = c.client.Update(ctx, updated, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}
	c.logger.Info("custom resources removed, CRD finalized", "crd", name)
	return 0, nil
}

// deleteInstances deletes the custom resources of crd, then checks that
// none remain. It returns the Terminating condition to report, or a retry
// delay while resources are still going away.
func (c *finalizerController) deleteInstances(ctx context.Context, crd *apiextv1.CustomResourceDefinition) (apiextv1.CustomResourceDefinitionCondition, time.Duration, error) {
	failed := func(reason, format string, err error) (apiextv1.CustomResourceDefinitionCondition, time.Duration, error) {
		return apiextv1.CustomResourceDefinitionCondition{
			Type: apiextv1.Terminating, Status: apiextv1.ConditionTrue,
			Reason: reason, Message: fmt.Sprintf(format, err),
		}, 0, err
	}

	since, waiting := c.waitingSince(crd)
	if !waiting && c.instances != nil {
		// Most CRDs deleted have no objects left: asking storage saves
		// the lists, and building the endpoints they would need. It is
		// also the only way to finalize a CRD that serves no version.
		gr := schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Status.AcceptedNames.Plural}
		if has, err := c.instances.HasObjects(ctx, gr); err == nil && !has {
			return deletionCompleted, 0, nil
		}
	}

	version := servedVersion(crd)
	if version == "" {
		err := fmt.Errorf("unable to find a custom resource client for %s.%s: no version is served", crd.Spec.Names.Plural, crd.Spec.Group)
		return failed("InstanceDeletionFailed", "could not list instances: %v", err)
	}
	resource := c.dynamic.Resource(schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural})
	if !waiting {
		namespaces, err := instanceNamespaces(ctx, resource)
		if err != nil {
			return failed("InstanceDeletionFailed", "could not list instances: %v", err)
		}
		var errs []error
		for _, ns := range namespaces {
			if err := deleteAll(ctx, resource, ns); err != nil {
				errs = append(errs, err)
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			return failed("InstanceDeletionFailed", "could not issue all deletes: %v", err)
		}
		since = c.startWaiting(crd)
	}

	list, err := resource.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		c.stopWaiting(crd.Name)
		return failed("InstanceDeletionCheck", "could not confirm zero CustomResources remaining: %v", err)
	}
	if len(list.Items) == 0 {
		c.stopWaiting(crd.Name)
		return deletionCompleted, 0, nil
	}
	if c.now().Sub(since) >= instanceWaitTimeout {
		c.stopWaiting(crd.Name)
		return failed("InstanceDeletionCheck", "could not confirm zero CustomResources remaining: %v", context.DeadlineExceeded)
	}
	remaining := int64(len(list.Items))
	if n := list.GetRemainingItemCount(); n != nil {
		remaining += *n
	}
	c.logger.Debug("waiting for custom resources to go away", "crd", crd.Name, "remaining", remaining)
	return apiextv1.CustomResourceDefinitionCondition{}, instancePollInterval, nil
}

// instanceNamespaces lists the resource in every namespace and returns the
// namespaces holding some, in the order met ("" for a cluster-scoped CRD).
func instanceNamespaces(ctx context.Context, resource dynamic.NamespaceableResourceInterface) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := resource.List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			if ns := list.Items[i].GetNamespace(); !seen[ns] {
				seen[ns] = true
				out = append(out, ns)
			}
		}
		opts.Continue = list.GetContinue()
		if opts.Continue == "" {
			return out, nil
		}
	}
}

// deleteAll deletes the resource's objects in namespace ns (the cluster
// scope for ""), with one deletecollection, or one by one when the server
// does not offer it.
func deleteAll(ctx context.Context, resource dynamic.NamespaceableResourceInterface, ns string) error {
	var ri dynamic.ResourceInterface = resource
	if ns != "" {
		ri = resource.Namespace(ns)
	}
	err := ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if !apierrors.IsMethodNotSupported(err) {
		return err
	}
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := ri.List(ctx, opts)
		if err != nil {
			return err
		}
		for i := range list.Items {
			err := ri.Delete(ctx, list.Items[i].GetName(), metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		opts.Continue = list.GetContinue()
		if opts.Continue == "" {
			return nil
		}
	}
}

// servedVersion is the version the finalizer reads custom resources
// through: the storage version if it is served, else the first served one.
func servedVersion(crd *apiextv1.CustomResourceDefinition) string {
	first := ""
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if v.Storage {
			return v.Name
		}
		if first == "" {
			first = v.Name
		}
	}
	return first
}

func (c *finalizerController) waitingSince(crd *apiextv1.CustomResourceDefinition) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.waiting[crd.Name]
	if !ok || w.uid != crd.UID {
		return time.Time{}, false
	}
	return w.since, true
}

func (c *finalizerController) startWaiting(crd *apiextv1.CustomResourceDefinition) time.Time {
	now := c.now()
	c.mu.Lock()
	c.waiting[crd.Name] = waitState{uid: crd.UID, since: now}
	c.mu.Unlock()
	return now
}

func (c *finalizerController) stopWaiting(name string) {
	c.mu.Lock()
	delete(c.waiting, name)
	c.mu.Unlock()
}
