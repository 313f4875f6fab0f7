package core

import (
	"context"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
)

// EvictionREST serves pods/eviction: a policy/v1 Eviction deletes the pod
// with the Eviction's DeleteOptions, after marking it with a
// DisruptionTarget condition, if the PodDisruptionBudget of a running pod
// allows one more disruption.
type EvictionREST struct {
	store   *registry.Store   // the pods store, with the pods/status strategy
	budgets DisruptionBudgets // nil: no pod has a budget
}

var (
	_ rest.NamedCreater = (*EvictionREST)(nil)
	_ rest.Scoper       = (*EvictionREST)(nil)
)

// NewEvictionREST returns the storage of pods/eviction over the pods store,
// consulting budgets (which may be nil).
func NewEvictionREST(pods *registry.Store, budgets DisruptionBudgets) *EvictionREST {
	return &EvictionREST{store: pods.WithStrategy(PodStatusStrategy{}), budgets: budgets}
}

// New returns an empty policy/v1 Eviction.
func (*EvictionREST) New() runtime.Object { return &policyv1.Eviction{} }

// NamespaceScoped is true.
func (*EvictionREST) NamespaceScoped() bool { return true }

// evictionGroupKind names the Eviction in its validation errors.
var evictionGroupKind = schema.GroupKind{Group: "policy", Kind: "Eviction"}

// evictionRetry is kube's retry of an eviction whose pod changed under it.
var evictionRetry = wait.Backoff{Steps: 20, Duration: 500 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// Create evicts the pod name.
func (r *EvictionREST) Create(ctx context.Context, name string, obj runtime.Object, validate rest.ValidateObjectFunc, opts *metav1.CreateOptions) (runtime.Object, error) {
	evName, delOpts, err := evictionOf(obj)
	if err != nil {
		return nil, err
	}
	if name != evName {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if delOpts != nil && delOpts.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *delOpts.IgnoreStoreReadErrorWithClusterBreakingPotential {
		return nil, apierrors.NewInvalid(evictionGroupKind, name, field.ErrorList{field.Invalid(
			field.NewPath("deleteOptions", "ignoreStoreReadErrorWithClusterBreakingPotential"), true,
			"can not be set for pod eviction, try after removing the option")})
	}
	delOpts, err = propagateDryRun(delOpts, opts.DryRun)
	if err != nil {
		return nil, err
	}
	if validate != nil {
		if err := validate(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	retryOn := apierrors.IsConflict
	if rvPreconditionSet(delOpts) {
		retryOn = func(error) bool { return false }
	}
	var pod *corev1.Pod
	deleted := false
	err = retry.OnError(evictionRetry, retryOn, func() error {
		got, err := r.store.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod = got.(*corev1.Pod)
		if !mayIgnoreBudgets(pod) {
			return nil // the budgets decide below
		}
		o := delOpts
		// A pending pod may only go at the version seen here, before it
		// could start and count for its budget.
		if enforceResourceVersion(pod) && !rvPreconditionSet(delOpts) {
			o = withResourceVersion(delOpts, pod.ResourceVersion)
		}
		if err := r.markAndDelete(ctx, name, o); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !deleted {
		if err := r.evictGuarded(ctx, pod, delOpts); err != nil {
			return nil, err
		}
	}
	return &metav1.Status{Status: metav1.StatusSuccess}, nil
}

// withResourceVersion returns a copy of o with a resourceVersion precondition.
func withResourceVersion(o *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	o = o.DeepCopy()
	if o.Preconditions == nil {
		o.Preconditions = &metav1.Preconditions{}
	}
	o.Preconditions.ResourceVersion = &rv
	return o
}

// evictionOf returns the name and DeleteOptions of a policy/v1 or v1beta1
// Eviction.
func evictionOf(obj runtime.Object) (string, *metav1.DeleteOptions, error) {
	switch ev := obj.(type) {
	case *policyv1.Eviction:
		return ev.Name, ev.DeleteOptions, nil
	case *policyv1beta1.Eviction:
		return ev.Name, ev.DeleteOptions, nil
	}
	return "", nil, apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %T", obj))
}

// propagateDryRun makes the request's dryRun and the Eviction's agree.
func propagateDryRun(o *metav1.DeleteOptions, dryRun []string) (*metav1.DeleteOptions, error) {
	switch {
	case o == nil:
		return &metav1.DeleteOptions{DryRun: dryRun}, nil
	case len(o.DryRun) == 0:
		o = o.DeepCopy()
		o.DryRun = dryRun
		return o, nil
	case len(dryRun) == 0 || reflect.DeepEqual(dryRun, o.DryRun):
		return o, nil
	}
	return nil, apierrors.NewBadRequest(fmt.Sprintf("Non-matching dry-run options in request and content: %v and %v", dryRun, o.DryRun))
}

func rvPreconditionSet(o *metav1.DeleteOptions) bool {
	return o.Preconditions != nil && o.Preconditions.ResourceVersion != nil
}

// mayIgnoreBudgets: a pod that is not running, or already going, disrupts
// nothing more by being evicted.
func mayIgnoreBudgets(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

func enforceResourceVersion(pod *corev1.Pod) bool {
	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	return !terminal && pod.DeletionTimestamp == nil
}

// markAndDelete adds the DisruptionTarget condition to the pod, unless in
// a dry run, then deletes it with o. The condition update moves the pod's
// resourceVersion: a precondition on it follows.
func (r *EvictionREST) markAndDelete(ctx context.Context, name string, o *metav1.DeleteOptions) error {
	if len(o.DryRun) == 0 {
		mark := func(_ context.Context, old runtime.Object) (runtime.Object, error) {
			if old == nil {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
			}
			pod := old.DeepCopyObject().(*corev1.Pod)
			if err := checkEvictionPreconditions(pod, o.Preconditions); err != nil {
				return nil, err
			}
			setPodCondition(&pod.Status, corev1.PodCondition{
				Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting",
			})
			return pod, nil
		}
		updated, _, err := r.store.Update(ctx, name, rest.UpdatedObjectFunc(mark), nil, nil, false, &metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		if rvPreconditionSet(o) {
			m, err := meta.Accessor(updated)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			o = o.DeepCopy()
			rv := m.GetResourceVersion()
			o.Preconditions.ResourceVersion = &rv
		}
	}
	_, _, err := r.store.Delete(ctx, name, nil, o)
	return err
}

// checkEvictionPreconditions answers a stale uid or resourceVersion as
// kube's eviction does.
func checkEvictionPreconditions(pod *corev1.Pod, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	gr := schema.GroupResource{Resource: "Pod"}
	if uid := pre.UID; uid != nil && *uid != "" && *uid != pod.UID {
		return apierrors.NewConflict(gr, pod.Name, fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *uid, pod.UID))
	}
	if rv := pre.ResourceVersion; rv != nil && *rv != "" && *rv != pod.ResourceVersion {
		return apierrors.NewConflict(gr, pod.Name, fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *rv, pod.ResourceVersion))
	}
	return nil
}
