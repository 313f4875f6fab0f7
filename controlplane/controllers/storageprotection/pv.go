package storageprotection

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/admission/storageprotection"
	"github.com/capstan-io/capstan/internal/workloop"
)

// Volumes is the pv-protection loop.
type Volumes struct {
	client  kubernetes.Interface
	logger  *slog.Logger
	volumes cache.SharedIndexInformer
	queue   workqueue.TypedRateLimitingInterface[string]
}

// NewVolumes returns the loop; Run starts it.
func NewVolumes(client kubernetes.Interface, logger *slog.Logger) (*Volumes, error) {
	if client == nil || logger == nil {
		return nil, errors.New("pv-protection: client and logger are required")
	}
	c := &Volumes{
		client:  client,
		logger:  logger.With("controller", PVName),
		volumes: coreinformers.NewPersistentVolumeInformer(client, 0, cache.Indexers{}),
		queue:   newQueue(PVName),
	}
	_, err := c.volumes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.changed,
		UpdateFunc: func(_, obj any) { c.changed(obj) },
	})
	return c, err
}

// Run syncs volumes with workers goroutines until ctx is done.
func (c *Volumes) Run(ctx context.Context, workers int) {
	c.logger.Info("starting")
	defer c.logger.Info("stopped")
	workloop.Run(ctx, c.queue, workers, workloop.Worker(c.queue, c.sync, func(key string, err error) {
		c.logger.Debug("sync failed", "volume", key, "err", err)
	}), c.volumes)
}

func (c *Volumes) changed(obj any) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if ok && (needsFinalizer(pv, storageprotection.PVFinalizer) || deletionCandidate(pv, storageprotection.PVFinalizer)) {
		c.queue.Add(pv.Name)
	}
}

// sync removes the finalizer of a volume being deleted once it is not
// bound, and adds it to a live volume without it.
func (c *Volumes) sync(ctx context.Context, name string) error {
	obj, ok, err := c.volumes.GetStore().GetByKey(name)
	if err != nil || !ok {
		return err
	}
	pv := obj.(*corev1.PersistentVolume)
	switch {
	case deletionCandidate(pv, storageprotection.PVFinalizer):
		if pv.Status.Phase == corev1.VolumeBound {
			return nil
		}
		pv = pv.DeepCopy()
		pv.Finalizers = slices.DeleteFunc(pv.Finalizers, func(f string) bool { return f == storageprotection.PVFinalizer })
	case needsFinalizer(pv, storageprotection.PVFinalizer):
		pv = pv.DeepCopy()
		pv.Finalizers = append(pv.Finalizers, storageprotection.PVFinalizer)
	default:
		return nil
	}
	_, err = c.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
	return err
}
