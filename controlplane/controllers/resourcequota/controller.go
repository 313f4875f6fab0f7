// Package resourcequota is kube-controller-manager's resourcequota
// controller, in-process: it keeps each ResourceQuota's status.hard equal
// to its spec and status.used equal to what the namespace's objects
// consume, recounted when the quota changes and every resync period (which
// also returns what deleted objects held).
package resourcequota

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	_, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: c.updated,
	})
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
	c.enqueue(obj)
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
	workloop.Run(ctx, c.queue, workers, workloop.Worker(c.queue, c.sync, func(key string, err error) {
		c.cfg.Logger.Debug("recount failed", "quota", key, "err", err)
		// A resource may have come or gone since discovery was read.
		c.mapper.Reset()
	}), c.informer)
}

// resync enqueues every quota each period: the recount is what returns
// the usage of objects deleted since.
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
