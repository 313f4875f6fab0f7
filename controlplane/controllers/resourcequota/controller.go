// Package resourcequota is kube-controller-manager's resourcequota
// controller, in-process: it keeps each ResourceQuota's status.hard equal
// to its spec and status.used equal to what the namespace's objects
// consume, recounted when the quota changes, when an object it charges is
// deleted (or a pod finishes: replenish.go, watches.go), and every resync
// period.
package resourcequota

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/internal/workloop"
)

// Name is kube-controller-manager's name of the controller.
const Name = "resourcequota"

// Config holds what the controller needs.
type Config struct {
	Client    kubernetes.Interface
	Metadata  metadata.Interface
	Discovery discovery.DiscoveryInterface
	Logger    *slog.Logger
	// Resync is how often every quota is recounted; zero: 10 seconds.
	Resync time.Duration
}

// Controller keeps quota status true.
type Controller struct {
	cfg      Config
	informer cache.SharedIndexInformer
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	queue    workqueue.TypedRateLimitingInterface[string]
	// replenishing watch the objects quotas charge, to recount at once
	// when one goes; dynamic, those of other resources quotas count.
	replenishing []cache.SharedIndexInformer
	dynamic      *watches
}

// New returns the controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Metadata == nil || cfg.Discovery == nil || cfg.Logger == nil {
		return nil, errors.New("resourcequota controller: Client, Metadata, Discovery and Logger are required")
	}
	if cfg.Resync == 0 {
		cfg.Resync = 10 * time.Second
	}
	cfg.Logger = cfg.Logger.With("controller", Name)
	c := &Controller{
		cfg:      cfg,
		informer: coreinformers.NewResourceQuotaInformer(cfg.Client, "", 0, cache.Indexers{}),
		mapper:   restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cfg.Discovery)),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
	}
	c.dynamic = newWatches(c)
	_, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			c.enqueue(obj)
			c.dynamic.changed()
		},
		UpdateFunc: c.updated,
		DeleteFunc: c.deleted,
	})
	if err != nil {
		return nil, err
	}
	c.replenishing, err = c.replenishers()
	return c, err
}

// updated recounts a quota whose spec.hard changed, only: its status
// changes are this loop's and admission's charges, and a recount started by
// a charge could list the namespace before the charged object is stored
// and write back the usage without it, letting the next write past the
// quota. The resync recounts the rest, as kube's controller does.
func (c *Controller) updated(old, obj any) {
	o, ok1 := old.(*corev1.ResourceQuota)
	q, ok2 := obj.(*corev1.ResourceQuota)
	if ok1 && ok2 && equalLists(o.Spec.Hard, q.Spec.Hard) && equalLists(q.Status.Hard, q.Spec.Hard) {
		return
	}
	if !ok1 || !ok2 || !equalLists(o.Spec.Hard, q.Spec.Hard) {
		c.dynamic.changed()
	}
	c.enqueue(obj)
}

// deleted recounts the namespace's quotas that count quotas, and lets the
// watches of resources only the deleted quota counted go.
func (c *Controller) deleted(obj any) {
	c.replenishDeleted(schema.GroupResource{Resource: "resourcequotas"}, obj)
	c.dynamic.changed()
}

func (c *Controller) enqueue(obj any) {
	if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
		c.queue.Add(key)
	}
}

// Run recounts quotas with workers goroutines until ctx is done, and
// every quota each resync period.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.cfg.Logger.Info("starting")
	defer c.cfg.Logger.Info("stopped")
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.resync(ctx) })
	wg.Go(func() { c.dynamic.run(ctx) })
	workloop.Run(ctx, c.queue, workers, workloop.Worker(c.queue, c.sync, func(key string, err error) {
		c.cfg.Logger.Debug("recount failed", "quota", key, "err", err)
		// A resource may have come or gone since discovery was read.
		c.mapper.Reset()
	}), append([]cache.SharedIndexInformer{c.informer}, c.replenishing...)...)
}

// resync enqueues every quota each period: the recount is what returns
// the usage of deleted objects no informer watches, and corrects drift.
func (c *Controller) resync(ctx context.Context) {
	ticker := time.NewTicker(c.cfg.Resync)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			for _, obj := range c.informer.GetStore().List() {
				c.enqueue(obj)
			}
			c.dynamic.changed()
		}
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	obj, ok, err := c.informer.GetStore().GetByKey(key)
	if err != nil || !ok {
		return err
	}
	q := obj.(*corev1.ResourceQuota)
	used, err := c.recount(ctx, q)
	if err != nil {
		return err
	}
	c.dynamic.follow(q)
	if equalLists(q.Status.Hard, q.Spec.Hard) && equalLists(q.Status.Used, used) {
		return nil
	}
	q = q.DeepCopy()
	q.Status.Hard, q.Status.Used = q.Spec.Hard, used
	_, err = c.cfg.Client.CoreV1().ResourceQuotas(q.Namespace).UpdateStatus(ctx, q, metav1UpdateOptions)
	return err
}

func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for n, q := range a {
		if o, ok := b[n]; !ok || o.Cmp(q) != 0 {
			return false
		}
	}
	return true
}
