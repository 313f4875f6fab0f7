package namespace

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// contentRemainingError reports objects that are still going away, with an
// estimate in seconds of how long they will take.
type contentRemainingError struct {
	estimate int64
}

func (e *contentRemainingError) Error() string {
	return fmt.Sprintf("some content remains in the namespace, estimate %d seconds before it is removed", e.estimate)
}

// maxConflictRetries bounds the retries of a namespace update that lost a
// race; the work queue retries later beyond it.
const maxConflictRetries = 5

// sync brings one namespace forward: Terminating phase, then content
// deletion, then removal of the kubernetes finalizer.
func (c *Controller) sync(ctx context.Context, name string) error {
	// Other controllers edit terminating namespaces too: read the latest
	// state rather than the informer's.
	ns, err := c.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if ns.DeletionTimestamp == nil {
		return nil
	}
	ns, err = c.retryOnConflict(ctx, ns, c.markTerminating)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		return nil
	}

	estimate, err := c.deleteContent(ctx, ns)
	if err != nil {
		return err
	}
	if estimate > 0 {
		return &contentRemainingError{estimate}
	}
	_, err = c.retryOnConflict(ctx, ns, c.finalize)
	if apierrors.IsNotFound(err) {
		// Another controller finished the job.
		return nil
	}
	if err == nil {
		c.logger.Info("namespace emptied", "namespace", name)
	}
	return err
}

// updateFunc is an update of a namespace that may lose a race.
type updateFunc func(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error)

// retryOnConflict applies fn to ns, and to the latest namespace after each
// conflict. A namespace recreated under the same name is not ours to touch.
func (c *Controller) retryOnConflict(ctx context.Context, ns *corev1.Namespace, fn updateFunc) (*corev1.Namespace, error) {
	for range maxConflictRetries {
		result, err := fn(ctx, ns)
		if !apierrors.IsConflict(err) {
			return result, err
		}
		latest, err := c.client.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if latest.UID != ns.UID {
			return nil, fmt.Errorf("namespace %s: uid changed across retries", ns.Name)
		}
		ns = latest
	}
	return nil, fmt.Errorf("namespace %s: update kept conflicting", ns.Name)
}

// markTerminating sets the Terminating phase if it is not set yet.
func (c *Controller) markTerminating(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error) {
	if ns.Status.Phase == corev1.NamespaceTerminating {
		return ns, nil
	}
	ns = ns.DeepCopy()
	ns.Status.Phase = corev1.NamespaceTerminating
	return c.client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{})
}

// finalize removes the kubernetes finalizer through the finalize
// subresource; the resourceVersion of ns makes it fail on a race.
func (c *Controller) finalize(ctx context.Context, ns *corev1.Namespace) (*corev1.Namespace, error) {
	update := &corev1.Namespace{ObjectMeta: ns.ObjectMeta, Spec: ns.Spec}
	update.Spec.Finalizers = removeFinalizer(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	return c.client.CoreV1().Namespaces().Finalize(ctx, update, metav1.UpdateOptions{})
}

// removeFinalizer returns finalizers without token, sorted and without
// duplicates as kube returns them, and never nil so that the update carries
// an explicit empty list.
func removeFinalizer(finalizers []corev1.FinalizerName, token corev1.FinalizerName) []corev1.FinalizerName {
	out := make([]corev1.FinalizerName, 0, len(finalizers))
	for _, f := range finalizers {
		if f != token {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
