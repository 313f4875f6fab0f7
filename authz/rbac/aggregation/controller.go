// Package aggregation is kube's cluster role aggregation controller: a
// ClusterRole with an aggregationRule gets, as its rules, the union of the
// rules of every ClusterRole its selectors match. This is how admin, edit
// and view grow when a CRD's author labels a role aggregate-to-edit.
package aggregation

import (
	"context"
	"errors"
	"log/slog"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	rbacclient "k8s.io/client-go/kubernetes/typed/rbac/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/internal/workloop"
)

// FieldManager owns the rules of aggregated roles, as in kube.
const FieldManager = "clusterrole-aggregation-controller"

// Controller keeps the rules of aggregated ClusterRoles up to date.
type Controller struct {
	client   rbacclient.ClusterRolesGetter
	lister   rbaclisters.ClusterRoleLister
	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
	logger   *slog.Logger
}

// New returns a controller over the ClusterRole informer i, writing with
// client; Run starts it (and the informer).
func New(i rbacinformers.ClusterRoleInformer, client rbacclient.ClusterRolesGetter, logger *slog.Logger) (*Controller, error) {
	if client == nil || logger == nil {
		return nil, errors.New("cluster role aggregation controller: client and logger are required")
	}
	c := &Controller{
		client: client, lister: i.Lister(), informer: i.Informer(),
		logger: logger.With("controller", "clusterrole-aggregation"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "ClusterRoleAggregator"}),
	}
	// Which aggregated role a change affects is not worth computing: there
	// are few, so every change queues them all.
	_, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueueAggregated() },
		UpdateFunc: func(any, any) { c.enqueueAggregated() },
		DeleteFunc: func(any) { c.enqueueAggregated() },
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueueAggregated() {
	roles, err := c.lister.List(labels.Everything())
	if err != nil {
		c.logger.Error("listing cluster roles", "err", err)
		return
	}
	for _, r := range roles {
		if r.AggregationRule != nil {
			c.queue.Add(r.Name)
		}
	}
}

// Run aggregates with workers goroutines until ctx is done, and returns
// once they have stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.logger.Info("starting")
	defer c.logger.Info("stopped")

	workloop.Run(ctx, c.queue, workers, c.processNext, c.informer)
}

func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	switch err := c.sync(ctx, name); {
	case err == nil:
		c.queue.Forget(name)
	case ctx.Err() != nil:
	default:
		c.logger.Error("aggregating cluster role failed", "clusterrole", name, "err", err)
		c.queue.AddRateLimited(name)
	}
	return true
}

// sync sets the rules of one aggregated role, if they changed, with a
// forced server-side apply that owns exactly the rules. The apply carries
// the resourceVersion the informer saw: an admin's edit that the informer
// has not seen yet (taking the aggregationRule away, say) makes it a
// conflict, retried once the informer has caught up, instead of being
// overwritten. kube's controller applies without it, and can overwrite.
func (c *Controller) sync(ctx context.Context, name string) error {
	role, err := c.lister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || role.AggregationRule == nil {
		return err
	}
	rules, err := Aggregate(role, c.lister.List)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return nil
	}
	apply := rbacv1ac.ClusterRole(name).WithResourceVersion(role.ResourceVersion)
	for _, r := range rules {
		apply.WithRules(&rbacv1ac.PolicyRuleApplyConfiguration{
			Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources,
			ResourceNames: r.ResourceNames, NonResourceURLs: r.NonResourceURLs,
		})
	}
	_, err = c.client.ClusterRoles().Apply(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}

// Aggregate returns the rules role aggregates: for each selector in turn,
// the rules of the matching roles (by name, role itself excepted), each
// rule once. An aggregated role with nothing to aggregate has no rules,
// written as an empty list.
func Aggregate(role *rbacv1.ClusterRole, list func(labels.Selector) ([]*rbacv1.ClusterRole, error)) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		matched, err := list(sel)
		if err != nil {
			return nil, err
		}
		sort.Slice(matched, func(a, b int) bool { return matched[a].Name < matched[b].Name })
		for _, m := range matched {
			if m.Name == role.Name {
				continue
			}
			for _, r := range m.Rules {
				if !containsRule(rules, r) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules, nil
}

func containsRule(rules []rbacv1.PolicyRule, r rbacv1.PolicyRule) bool {
	for _, have := range rules {
		if equality.Semantic.DeepEqual(have, r) {
			return true
		}
	}
	return false
}
