package namespace

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// finalizerEstimateSeconds is the time allowed to objects held by finalizers,
// usually the garbage collector's.
const finalizerEstimateSeconds = 15

// deleteContent deletes every namespaced object in ns and records the
// outcome in its conditions, updating ns. It returns an estimate in seconds of the time
// the remaining objects need to go away, zero when none remain.
func (c *Controller) deleteContent(ctx context.Context, ns *corev1.Namespace) (int64, error) {
	rep := newReport()
	var errs []error
	// Discovery errors are not fatal: the groups that answered can still
	// be emptied, and the namespace is not finalized while errs is set.
	lists, err := c.discovery.ServerPreferredNamespacedResources()
	if err != nil {
		rep.discoveryErr = err
		errs = append(errs, err)
	}
	resources, err := deletableResources(lists)
	if err != nil {
		rep.parseErr = err
		errs = append(errs, err)
	}

	var estimate int64
	for _, r := range resources {
		// Pods go first and alone: deleting the rest (service accounts,
		// secrets...) under running pods would break their shutdown.
		if r.gvr != podsGVR && rep.remaining[podsGVR] > 0 {
			break
		}
		est, err := c.deleteResource(ctx, ns, r, rep)
		if err != nil {
			errs = append(errs, err)
			rep.contentErrs = append(rep.contentErrs, err)
		}
		estimate = max(estimate, est)
	}

	c.updateConditions(ctx, ns, rep)
	return estimate, errors.Join(errs...)
}

// updateConditions writes the conditions of rep to ns, and the result back
// into ns so that the finalize update that follows carries its
// resourceVersion. Conditions are informative: a failed update is logged and
// does not stop the deletion.
func (c *Controller) updateConditions(ctx context.Context, ns *corev1.Namespace, rep *report) {
	if !updateConditions(&ns.Status, rep.conditions(), metav1.NewTime(c.now())) {
		return
	}
	updated, err := c.client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{})
	if err != nil {
		c.logger.Warn("updating namespace conditions", "namespace", ns.Name, "err", err)
		return
	}
	*ns = *updated
}

// deleteResource deletes the objects of one resource in ns and counts those
// that remain into rep. It returns the estimate of their remaining time.
func (c *Controller) deleteResource(ctx context.Context, ns *corev1.Namespace, r resource, rep *report) (int64, error) {
	var estimate int64
	if r.gvr == podsGVR {
		var err error
		if estimate, err = c.podsEstimate(ctx, ns); err != nil {
			return 0, err
		}
	}
	if err := c.deleteObjects(ctx, ns.Name, r); err != nil {
		return estimate, err
	}
	if !r.list {
		return estimate, nil
	}
	remaining, err := c.metadata.Resource(r.gvr).Namespace(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		if notSupported(err) {
			return estimate, nil
		}
		return estimate, err
	}
	if len(remaining.Items) == 0 {
		return 0, nil
	}
	rep.remaining[r.gvr] += len(remaining.Items)
	held := 0
	for _, item := range remaining.Items {
		for _, f := range item.Finalizers {
			rep.finalizers[f]++
		}
		if len(item.Finalizers) > 0 {
			held++
		}
	}
	switch {
	case estimate > 0:
		return estimate, nil
	case held > 0:
		return finalizerEstimateSeconds, nil
	}
	// Nothing explains why the objects are still there.
	return 0, fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", ns.Name, r.gvr)
}

// deleteObjects deletes every object of r in namespace, with one request if
// the resource allows it. Propagation is background so that the garbage
// collector adds no orphan finalizer: everything in the namespace goes.
func (c *Controller) deleteObjects(ctx context.Context, namespace string, r resource) error {
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	client := c.metadata.Resource(r.gvr).Namespace(namespace)
	if r.deleteCollection {
		err := client.DeleteCollection(ctx, opts, metav1.ListOptions{})
		if err == nil || !notSupported(err) {
			return err
		}
	}
	if !r.list {
		return nil
	}
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		if notSupported(err) {
			return nil
		}
		return err
	}
	for _, item := range list.Items {
		if err := client.Delete(ctx, item.Name, opts); err != nil && !notSupported(err) {
			return err
		}
	}
	return nil
}

// notSupported reports errors that mean the verb is not served, whatever
// discovery said; kube treats a NotFound of the collection the same way.
func notSupported(err error) bool {
	return apierrors.IsMethodNotSupported(err) || apierrors.IsNotFound(err)
}

// podsEstimate returns the longest grace period of the running pods in ns
// that has not yet elapsed since the deletion of ns, in seconds.
func (c *Controller) podsEstimate(ctx context.Context, ns *corev1.Namespace) (int64, error) {
	pods, err := c.client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	var grace int64
	for _, pod := range pods.Items {
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if g := pod.Spec.TerminationGracePeriodSeconds; g != nil && *g > grace {
			grace = *g
		}
	}
	return graceLeft(grace, c.now().Sub(ns.DeletionTimestamp.Time)), nil
}
