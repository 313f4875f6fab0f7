// Package namespace holds the namespace lifecycle controller: once the
// deletion of a namespace is requested, it deletes everything in it, then
// removes the kubernetes finalizer so that the namespace itself goes away.
package namespace

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/internal/workloop"
)

const (
	// DefaultGracePeriod is kube's delay before a namespace whose deletion
	// was requested is emptied: it lets every apiserver replica see the
	// deletion, and so refuse new objects in the namespace, and lets
	// objects created at the last moment reach every etcd member.
	DefaultGracePeriod = 5 * time.Second
	// DefaultResyncPeriod is kube's --namespace-sync-period.
	DefaultResyncPeriod = 5 * time.Minute
)

// Discoverer finds the namespaced resources a server serves. The discovery
// client of client-go implements it.
type Discoverer interface {
	ServerPreferredNamespacedResources() ([]*metav1.APIResourceList, error)
}

// Config holds what the controller needs.
type Config struct {
	Client    kubernetes.Interface
	Metadata  metadata.Interface
	Discovery Discoverer
	Logger    *slog.Logger
	// GracePeriod delays the first sync of a deleted namespace; zero
	// syncs at once. Servers should use DefaultGracePeriod.
	GracePeriod time.Duration
	// ResyncPeriod re-examines every namespace periodically; zero never
	// does. Servers should use DefaultResyncPeriod.
	ResyncPeriod time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the namespace lifecycle controller.
type Controller struct {
	client      kubernetes.Interface
	metadata    metadata.Interface
	discovery   Discoverer
	logger      *slog.Logger
	gracePeriod time.Duration
	now         func() time.Time
	informer    cache.SharedIndexInformer
	queue       workqueue.TypedRateLimitingInterface[string]
}

// New returns a controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Metadata == nil || cfg.Discovery == nil || cfg.Logger == nil {
		return nil, errors.New("namespace controller: Client, Metadata, Discovery and Logger are required")
	}
	c := &Controller{
		client:      cfg.Client,
		metadata:    cfg.Metadata,
		discovery:   cfg.Discovery,
		logger:      cfg.Logger.With("controller", "namespace"),
		gracePeriod: cfg.GracePeriod,
		now:         cfg.Now,
		informer:    coreinformers.NewNamespaceInformer(cfg.Client, cfg.ResyncPeriod, cache.Indexers{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter(),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "namespace"}),
	}
	if c.now == nil {
		c.now = time.Now
	}
	_, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// rateLimiter retries failed namespaces quickly at first and at least once a
// minute, with an overall limit of 10 per second: namespaces being deleted
// are few, and users wait for them.
func rateLimiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Minute),
		&workqueue.TypedBucketRateLimiter[string]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// enqueue queues a namespace whose deletion was requested; the others need
// nothing from this controller.
func (c *Controller) enqueue(obj any) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.DeletionTimestamp == nil {
		return
	}
	c.queue.AddAfter(ns.Name, c.gracePeriod)
}

// Run watches namespaces and empties the deleted ones with workers
// goroutines. It returns once ctx is done and every goroutine has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.logger.Info("starting")
	defer c.logger.Info("stopped")

	workloop.Run(ctx, c.queue, workers, c.processNext, c.informer)
}

// processNext syncs one namespace from the queue; it returns false once the
// queue is shut down.
func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)

	err := c.sync(ctx, name)
	var remaining *contentRemainingError
	switch {
	case err == nil:
		c.queue.Forget(name)
	case errors.As(err, &remaining):
		// Content is going away on its own (graceful deletion, finalizers):
		// look again after half the estimate, as kube does.
		wait := time.Duration(remaining.estimate/2+1) * time.Second
		c.logger.Debug("content remaining", "namespace", name, "wait", wait)
		c.queue.AddAfter(name, wait)
	case ctx.Err() != nil:
		// Shutting down: the error is the cancellation.
	default:
		c.logger.Error("namespace deletion failed", "namespace", name, "err", err)
		c.queue.AddRateLimited(name)
	}
	return true
}
