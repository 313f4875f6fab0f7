package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// DisruptionBudgets are the PodDisruptionBudgets an eviction consults.
type DisruptionBudgets interface {
	// List returns the budgets of a namespace.
	List(ctx context.Context, namespace string) ([]policyv1.PodDisruptionBudget, error)
	// Get returns one budget.
	Get(ctx context.Context, namespace, name string) (*policyv1.PodDisruptionBudget, error)
	// UpdateStatus writes the status of pdb if pdb is still at its
	// resourceVersion, and answers a Conflict otherwise.
	UpdateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error
}

// maxDisruptedPods is kube's bound on the evictions a budget may have
// granted that its controller has not seen yet.
const maxDisruptedPods = 2000

// budgetViolationMsg is kube's message of an eviction a budget refuses.
const budgetViolationMsg = "Cannot evict pod as it would violate the pod's disruption budget."

// pdbResource names budgets in kube's Forbidden errors, in the singular.
var pdbResource = schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}

// evictGuarded evicts a running pod as its budget allows: a pod without a
// budget goes at once; a ready pod (or an unready one its budget does not
// let go freely) takes one of the budget's allowed disruptions; more than
// one budget is an error, as in kube.
func (r *EvictionREST) evictGuarded(ctx context.Context, pod *corev1.Pod, delOpts *metav1.DeleteOptions) error {
	pdbs, err := r.matchingBudgets(ctx, pod)
	if err != nil {
		return err
	}
	if len(pdbs) > 1 {
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
		}}
	}
	pinned, pdbName := false, ""
	if len(pdbs) == 1 {
		pdb := &pdbs[0]
		pdbName = pdb.Name
		pinned = !podReady(pod) && unhealthyMayGo(pdb)
		if !pinned {
			if err := r.takeDisruption(ctx, pod, pdb, len(delOpts.DryRun) > 0); err != nil {
				return err
			}
		}
	}
	o := delOpts
	if pinned {
		// The pod goes only if it did not turn ready since it was read.
		o = withResourceVersion(delOpts, pod.ResourceVersion)
	}
	err = r.markAndDelete(ctx, pod.Name, o)
	if apierrors.IsConflict(err) && pinned && !rvPreconditionSet(delOpts) {
		return budgetBusy(pdbName)
	}
	return err
}

// unhealthyMayGo reports whether an unready pod of pdb may be evicted
// without taking a disruption: always under the AlwaysAllow policy, else
// when the budget has its healthy pods.
func unhealthyMayGo(pdb *policyv1.PodDisruptionBudget) bool {
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
		return true
	}
	return pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0
}

// takeDisruption takes one allowed disruption of pdb, reading it again
// after a conflicting write.
func (r *EvictionREST) takeDisruption(ctx context.Context, pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget, dryRun bool) error {
	refresh := false
	err := retry.RetryOnConflict(evictionRetry, func() error {
		if refresh {
			fresh, err := r.budgets.Get(ctx, pod.Namespace, pdb.Name)
			if err != nil {
				return err
			}
			pdb = fresh
		}
		if err := r.decrement(ctx, pod.Name, pdb.DeepCopy(), dryRun); err != nil {
			refresh = true
			return err
		}
		return nil
	})
	if wait.Interrupted(err) {
		return apierrors.NewTimeoutError(fmt.Sprintf("couldn't update PodDisruptionBudget %q due to conflicts", pdb.Name), 10)
	}
	return err
}

// decrement checks that pdb allows a disruption and records it: one fewer
// allowed, and the pod among the disrupted pods its controller will count.
func (r *EvictionREST) decrement(ctx context.Context, podName string, pdb *policyv1.PodDisruptionBudget, dryRun bool) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return budgetBusy(pdb.Name)
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return budgetForbidden(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	}
	if len(pdb.Status.DisruptedPods) > maxDisruptedPods {
		return budgetForbidden(pdb.Name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller")
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		err := apierrors.NewTooManyRequests(budgetViolationMsg, 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes,
			metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: noDisruptionMessage(pdb)})
		return err
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		meta.SetStatusCondition(&pdb.Status.Conditions, metav1.Condition{
			Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
			Reason: policyv1.InsufficientPodsReason, ObservedGeneration: pdb.Status.ObservedGeneration,
		})
	}
	if dryRun {
		return nil
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = map[string]metav1.Time{}
	}
	pdb.Status.DisruptedPods[podName] = metav1.Time{Time: time.Now()}
	return r.budgets.UpdateStatus(ctx, pdb)
}

// noDisruptionMessage explains why pdb allows no disruption, in kube's words.
func noDisruptionMessage(pdb *policyv1.PodDisruptionBudget) string {
	c := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	failed := c != nil && c.Status == metav1.ConditionFalse && c.Message != ""
	switch {
	case failed && c.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, c.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case failed:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, c.Reason, c.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
}

// budgetBusy is the 429 of a budget whose controller has not caught up.
func budgetBusy(name string) error {
	err := apierrors.NewTooManyRequests(budgetViolationMsg, 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: policyv1.DisruptionBudgetCause, Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", name),
	})
	return err
}

func budgetForbidden(name, reason, cause string) error {
	err := apierrors.NewForbidden(pdbResource, name, errors.New(reason))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", name, cause),
	})
	return err
}

// matchingBudgets returns the budgets of pod's namespace that select it. A
// budget with an invalid selector selects nothing.
func (r *EvictionREST) matchingBudgets(ctx context.Context, pod *corev1.Pod) ([]policyv1.PodDisruptionBudget, error) {
	if r.budgets == nil {
		return nil, nil
	}
	all, err := r.budgets.List(ctx, pod.Namespace)
	if err != nil {
		return nil, err
	}
	var out []policyv1.PodDisruptionBudget
	for _, pdb := range all {
		if pdb.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

// podReady is kube's IsPodReady: the Ready condition is True.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
