// Package storageversionmigrator performs StorageVersionMigrations: it
// rewrites every stored object of the migration's resource that was
// written before the migration began, through the API, so that each is
// stored again at the resource's current storage version and encoding (and
// encryption key), then marks the migration Succeeded, or Failed with the
// reason. It is kube-controller-manager's storage-version-migrator
// controller, which capstan runs in-process.
package storageversionmigrator

import (
	"context"
	"errors"
	"log/slog"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	svminformers "k8s.io/client-go/informers/storagemigration/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/apis/storagemigration"
	"github.com/capstan-io/capstan/internal/workloop"
)

// Name is kube-controller-manager's name of the controller, the field
// manager of its writes.
const Name = "storage-version-migrator-controller"

// Config is what the controller works with.
type Config struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	// Mapper finds the served version of a migration's group and resource.
	Mapper Mapper
	Logger *slog.Logger
}

// Mapper resolves a group and resource to a served version and kind.
type Mapper interface {
	meta.RESTMapper
	// Reset forgets what it learnt, for a resource that appeared since
	// (a CRD).
	Reset()
}

// Controller is the migrator.
type Controller struct {
	cfg        Config
	migrations cache.SharedIndexInformer
	queue      workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Dynamic == nil || cfg.Mapper == nil || cfg.Logger == nil {
		return nil, errors.New("storageversionmigrator: Client, Dynamic, Mapper and Logger are required")
	}
	c := &Controller{
		cfg:        cfg,
		migrations: svminformers.NewStorageVersionMigrationInformer(cfg.Client, 0, cache.Indexers{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: Name}),
	}
	c.cfg.Logger = cfg.Logger.With("controller", Name)
	_, err := c.migrations.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	return c, err
}

func (c *Controller) enqueue(obj any) {
	if svm, ok := obj.(*svmv1.StorageVersionMigration); ok && !finished(svm) {
		c.queue.Add(svm.Name)
	}
}

func finished(svm *svmv1.StorageVersionMigration) bool {
	return storagemigration.IsTrue(svm, svmv1.MigrationSucceeded) || storagemigration.IsTrue(svm, svmv1.MigrationFailed)
}

// Run migrates, one migration at a time as kube does, until ctx is done,
// and returns once every goroutine has stopped.
func (c *Controller) Run(ctx context.Context) {
	c.cfg.Logger.Info("starting")
	defer c.cfg.Logger.Info("stopped")
	workloop.Run(ctx, c.queue, 1, c.processNext, c.migrations)
}

func (c *Controller) processNext(ctx context.Context) bool {
	name, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(name)
	err := c.sync(ctx, name)
	switch {
	case err == nil:
		c.queue.Forget(name)
	case ctx.Err() != nil:
	default:
		c.cfg.Logger.Error("migration failed for now; retrying", "migration", name, "err", err)
		c.queue.AddRateLimited(name)
	}
	return true
}

func (c *Controller) sync(ctx context.Context, name string) error {
	obj, ok, err := c.migrations.GetStore().GetByKey(name)
	if err != nil || !ok {
		return err
	}
	svm := obj.(*svmv1.StorageVersionMigration).DeepCopy()
	if finished(svm) {
		return nil
	}
	return c.migrate(ctx, svm)
}
