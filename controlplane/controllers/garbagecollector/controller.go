// Package garbagecollector holds the garbage collector: it deletes objects
// whose owners (metadata.ownerReferences) are all gone, deletes the
// dependents of an owner deleted in the foreground before letting the owner
// go, and frees the dependents of an owner deleted with the orphan policy.
// kube-apiserver leaves this to kube-controller-manager; capstan runs it
// itself so that ownerReferences work with nothing else running.
//
// It watches every deletable resource with a metadata informer, each
// started only once the resource may hold objects (LazyResources: a
// built-in resource from its first create, or at once if etcd holds objects
// of it; a custom resource likewise). The informers' caches keep each
// object as the graph's node of it: the UID as the 16 bytes of its UUID,
// namespaces shared, owners and deletion state only in the nodes that have
// them (BenchmarkGraphMemory measures a node).
package garbagecollector

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/util/workqueue"
)

// DefaultDiscoveryPeriod is how often the set of watched resources is
// brought up to date with discovery, as kube's collector does.
const DefaultDiscoveryPeriod = 30 * time.Second

// Discoverer lists the resources the server serves, in every version. The
// discovery client of client-go implements it.
type Discoverer interface {
	ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error)
}

// Config holds what the collector needs.
type Config struct {
	Metadata  metadata.Interface
	Discovery Discoverer
	Logger    *slog.Logger
	// DiscoveryPeriod refreshes the watched resources; zero means
	// DefaultDiscoveryPeriod.
	DiscoveryPeriod time.Duration
	// SyncTimeout bounds the pause of the workers while the informers of
	// newly discovered resources fill; zero means 30 seconds.
	SyncTimeout time.Duration
	// Lazy, if set, are resources watched only once they may hold objects.
	Lazy LazyResources
}

// Controller is the garbage collector.
type Controller struct {
	metadata    metadata.Interface
	discovery   Discoverer
	logger      *slog.Logger
	period      time.Duration
	syncTimeout time.Duration

	graph *graph
	// events carries informer notifications to the one goroutine that
	// changes the graph, in order.
	events workqueue.TypedInterface[*event]
	// toDelete holds objects to examine: delete them if their owners are
	// gone, or finish their foreground deletion. toOrphan holds owners
	// deleted with the orphan finalizer.
	toDelete workqueue.TypedRateLimitingInterface[types.UID]
	toOrphan workqueue.TypedRateLimitingInterface[types.UID]

	// workers holds back the workers (read side) while the informers of new
	// resources fill (write side), so that no decision is taken on a graph
	// that misses a whole resource.
	workers sync.RWMutex

	lazy LazyResources // nil: every resource is watched

	mu       sync.Mutex
	mapping  map[schema.GroupVersionKind]mapping
	monitors map[schema.GroupVersionResource]*monitor
	// dormant are the lazy resources discovered without objects, not
	// watched; wanted the lazy ones to watch once discovered.
	dormant map[schema.GroupResource]schema.GroupVersionResource
	wanted  map[schema.GroupResource]bool
	stopped bool // no more monitors may start
	// rediscover asks the discovery loop for an early refresh (an owner
	// reference named an unknown kind).
	rediscover chan struct{}
	limiter    *rate.Limiter
	// crdPending is set while a refresh asked for by CRD changes waits.
	crdPending atomic.Bool
}

// New returns a collector; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Metadata == nil || cfg.Discovery == nil || cfg.Logger == nil {
		return nil, errors.New("garbage collector: Metadata, Discovery and Logger are required")
	}
	if cfg.DiscoveryPeriod == 0 {
		cfg.DiscoveryPeriod = DefaultDiscoveryPeriod
	}
	if cfg.SyncTimeout == 0 {
		cfg.SyncTimeout = 30 * time.Second
	}
	c := &Controller{
		metadata:    cfg.Metadata,
		discovery:   cfg.Discovery,
		logger:      cfg.Logger.With("controller", "garbagecollector"),
		period:      cfg.DiscoveryPeriod,
		syncTimeout: cfg.SyncTimeout,
		graph:       newGraph(),
		events:      workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[*event]{Name: "garbage_collector_graph_changes"}),
		toDelete: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.UID](),
			workqueue.TypedRateLimitingQueueConfig[types.UID]{Name: "garbage_collector_attempt_to_delete"}),
		toOrphan: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[types.UID](),
			workqueue.TypedRateLimitingQueueConfig[types.UID]{Name: "garbage_collector_attempt_to_orphan"}),
		mapping:    map[schema.GroupVersionKind]mapping{},
		monitors:   map[schema.GroupVersionResource]*monitor{},
		dormant:    map[schema.GroupResource]schema.GroupVersionResource{},
		wanted:     map[schema.GroupResource]bool{},
		lazy:       cfg.Lazy,
		rediscover: make(chan struct{}, 1),
		limiter:    rate.NewLimiter(rate.Every(5*time.Second), 1),
	}
	return c, nil
}

// Run watches every deletable resource and collects garbage with workers
// goroutines per queue. It returns once ctx is done and every goroutine it
// started has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.logger.Info("starting")
	defer c.logger.Info("stopped")

	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.stopMonitors()
	defer c.toOrphan.ShutDown()
	defer c.toDelete.ShutDown()
	defer c.events.ShutDown()

	wg.Go(func() {
		for c.processGraphChange() {
		}
	})
	if c.lazy != nil {
		c.lazy.OnWritable(func(gr schema.GroupResource) { c.writable(ctx, gr) })
	}
	c.resync(ctx)
	if ctx.Err() != nil {
		return
	}
	for range workers {
		wg.Go(func() {
			for c.processNext(ctx, c.toDelete, c.attemptToDelete) {
			}
		})
		wg.Go(func() {
			for c.processNext(ctx, c.toOrphan, c.attemptToOrphan) {
			}
		})
	}
	t := time.NewTicker(c.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.rediscover:
		}
		c.resync(ctx)
	}
}

// errInvalidOwner marks a reference that cannot be satisfied, whatever
// happens later: a cluster-scoped object cannot be owned by a namespaced one.
// The object is left alone and not retried, as in kube.
var errInvalidOwner = errors.New("cluster-scoped objects cannot refer to namespaced owners")

// unknownKindError is an owner reference to a kind discovery does not list
// (yet): a custom resource whose CRD is new, or a group version not served.
// It is retried, after an early discovery refresh.
type unknownKindError struct{ gvk schema.GroupVersionKind }

func (e *unknownKindError) Error() string { return "unknown owner kind " + e.gvk.String() }

// processNext handles one object of queue with sync; it returns false once
// the queue is shut down.
func (c *Controller) processNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[types.UID],
	sync func(context.Context, types.UID) error) bool {
	uid, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(uid)

	c.workers.RLock()
	err := sync(ctx, uid)
	c.workers.RUnlock()
	var unknown *unknownKindError
	switch {
	case err == nil, errors.Is(err, errInvalidOwner):
		if err != nil {
			c.logger.Info("ignoring invalid owner reference", "uid", uid, "err", err)
		}
		queue.Forget(uid)
	case ctx.Err() != nil:
	case errors.As(err, &unknown):
		c.logger.Debug("owner of unknown kind", "uid", uid, "err", err)
		c.requestDiscovery()
		queue.AddRateLimited(uid)
	default:
		c.logger.Error("garbage collection failed", "uid", uid, "err", err)
		queue.AddRateLimited(uid)
	}
	return true
}

// requestDiscovery asks for an early discovery refresh, at most every few
// seconds.
func (c *Controller) requestDiscovery() {
	if c.limiter.Allow() {
		c.wakeDiscovery()
	}
}

// wakeDiscovery wakes the discovery loop; wakes before it runs coalesce.
func (c *Controller) wakeDiscovery() {
	select {
	case c.rediscover <- struct{}{}:
	default:
	}
}
