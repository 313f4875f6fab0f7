// Package vapstatus is kube's validatingadmissionpolicy-status controller:
// it type-checks each ValidatingAdmissionPolicy's expressions against the
// schemas of the kinds it matches and writes the warnings to
// status.typeChecking, with status.observedGeneration.
package vapstatus

import (
	"context"
	"errors"
	"log/slog"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	arv1apply "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	arinformers "k8s.io/client-go/informers/admissionregistration/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/admission/policy/validating"
	"github.com/capstan-io/capstan/internal/workloop"
)

// Name is the field manager of the status writes, kube's.
const Name = "validatingadmissionpolicy-status"

// Controller is the loop.
type Controller struct {
	client   kubernetes.Interface
	logger   *slog.Logger
	checker  *validating.TypeChecker
	policies cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
}

// New returns the loop; Run starts it.
func New(client kubernetes.Interface, checker *validating.TypeChecker, logger *slog.Logger) (*Controller, error) {
	if client == nil || checker == nil || logger == nil {
		return nil, errors.New("validatingadmissionpolicy-status: client, checker and logger are required")
	}
	c := &Controller{
		client: client, checker: checker, logger: logger.With("controller", Name),
		policies: arinformers.NewValidatingAdmissionPolicyInformer(client, 0, cache.Indexers{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
	}
	_, err := c.policies.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.changed,
		UpdateFunc: func(_, obj any) { c.changed(obj) },
	})
	return c, err
}

func (c *Controller) changed(obj any) {
	if p, ok := obj.(*arv1.ValidatingAdmissionPolicy); ok && p.Generation > p.Status.ObservedGeneration {
		c.queue.Add(p.Name)
	}
}

// Run checks policies with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.logger.Info("starting")
	defer c.logger.Info("stopped")
	workloop.Run(ctx, c.queue, workers, workloop.Worker(c.queue, c.sync, func(key string, err error) {
		c.logger.Debug("sync failed", "policy", key, "err", err)
	}), c.policies)
}

// sync checks a policy whose generation the status has not seen, and
// applies the warnings and the generation to its status.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, ok, err := c.policies.GetStore().GetByKey(name)
	if err != nil || !ok {
		return err
	}
	p := obj.(*arv1.ValidatingAdmissionPolicy)
	if p.Generation <= p.Status.ObservedGeneration {
		return nil
	}
	warnings := c.checker.Check(p)
	applied := make([]*arv1apply.ExpressionWarningApplyConfiguration, 0, len(warnings))
	for _, w := range warnings {
		applied = append(applied, arv1apply.ExpressionWarning().WithFieldRef(w.FieldRef).WithWarning(w.Warning))
	}
	status := arv1apply.ValidatingAdmissionPolicy(p.Name).WithStatus(arv1apply.ValidatingAdmissionPolicyStatus().
		WithObservedGeneration(p.Generation).
		WithTypeChecking(arv1apply.TypeChecking().WithExpressionWarnings(applied...)))
	_, err = c.client.AdmissionregistrationV1().ValidatingAdmissionPolicies().ApplyStatus(ctx, status, metav1.ApplyOptions{FieldManager: Name, Force: true})
	return err
}
