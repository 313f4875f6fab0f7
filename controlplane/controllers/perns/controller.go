// Package perns keeps one object in every active namespace: the loop shape
// of kube-controller-manager's serviceaccount controller (a default
// ServiceAccount) and root-ca-cert-publisher (the kube-root-ca.crt config
// map). A namespace is synced when it appears or changes, and when its kept
// object changes or goes.
package perns

import (
	"context"
	"errors"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/internal/workloop"
)

// SyncFunc brings namespace's object to what it should be; current is the
// object as the informer has it, nil when there is none.
type SyncFunc func(ctx context.Context, namespace string, current any) error

// Config describes one kept object.
type Config struct {
	// Name is the controller's name, kube-controller-manager's.
	Name   string
	Client kubernetes.Interface
	// Objects is an informer of the kept objects (only them: filtered by
	// name), not yet running; keys namespace/ObjectName.
	Objects    cache.SharedIndexInformer
	ObjectName string
	Sync       SyncFunc
	Logger     *slog.Logger
}

// Controller is one per-namespace loop.
type Controller struct {
	cfg        Config
	namespaces cache.SharedIndexInformer
	queue      workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Objects == nil || cfg.Sync == nil || cfg.Logger == nil {
		return nil, errors.New("perns: Client, Objects, Sync and Logger are required")
	}
	c := &Controller{
		cfg:        cfg,
		namespaces: coreinformers.NewNamespaceInformer(cfg.Client, 0, cache.Indexers{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: cfg.Name}),
	}
	c.cfg.Logger = cfg.Logger.With("controller", cfg.Name)
	if _, err := c.namespaces.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueNamespace,
		UpdateFunc: func(_, obj any) { c.enqueueNamespace(obj) },
	}); err != nil {
		return nil, err
	}
	_, err := cfg.Objects.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { c.enqueueObject(obj) },
		DeleteFunc: c.enqueueObject,
	})
	return c, err
}

func (c *Controller) enqueueNamespace(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase == corev1.NamespaceActive {
		c.queue.Add(ns.Name)
	}
}

func (c *Controller) enqueueObject(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, err := meta.Accessor(obj); err == nil && m.GetName() == c.cfg.ObjectName {
		c.queue.Add(m.GetNamespace())
	}
}

// Run syncs namespaces with workers goroutines until ctx is done, and
// returns once every goroutine has stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.cfg.Logger.Info("starting")
	defer c.cfg.Logger.Info("stopped")
	workloop.Run(ctx, c.queue, workers, workloop.Worker(c.queue, c.sync, func(ns string, err error) {
		c.cfg.Logger.Error("sync failed", "namespace", ns, "err", err)
	}), c.namespaces, c.cfg.Objects)
}

func (c *Controller) sync(ctx context.Context, namespace string) error {
	obj, ok, err := c.namespaces.GetStore().GetByKey(namespace)
	if err != nil || !ok {
		return err
	}
	if obj.(*corev1.Namespace).Status.Phase != corev1.NamespaceActive {
		return nil
	}
	current, ok, err := c.cfg.Objects.GetStore().GetByKey(namespace + "/" + c.cfg.ObjectName)
	if err != nil {
		return err
	}
	if !ok {
		current = nil
	}
	return c.cfg.Sync(ctx, namespace, current)
}
