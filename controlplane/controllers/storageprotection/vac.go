package storageprotection

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/admission/storageprotection"
	"github.com/capstan-io/capstan/internal/workloop"
)

// VACName is kube-controller-manager's name of the
// volumeattributesclass-protection controller.
const VACName = "volumeattributesclass-protection-controller"

// classIndex indexes claims and volumes by the VolumeAttributesClasses
// they name.
const classIndex = "vac"

// Classes is the volumeattributesclass-protection loop: a class being
// deleted keeps its finalizer while a claim or volume names it.
type Classes struct {
	client  kubernetes.Interface
	logger  *slog.Logger
	classes cache.SharedIndexInformer
	claims  cache.SharedIndexInformer
	volumes cache.SharedIndexInformer
	queue   workqueue.TypedRateLimitingInterface[string]
}

// NewClasses returns the loop; Run starts it.
func NewClasses(client kubernetes.Interface, logger *slog.Logger) (*Classes, error) {
	if client == nil || logger == nil {
		return nil, errors.New("volumeattributesclass-protection: client and logger are required")
	}
	c := &Classes{
		client:  client,
		logger:  logger.With("controller", VACName),
		classes: storageinformers.NewVolumeAttributesClassInformer(client, 0, cache.Indexers{}),
		claims:  coreinformers.NewPersistentVolumeClaimInformer(client, "", 0, cache.Indexers{classIndex: indexBy(claimClasses)}),
		volumes: coreinformers.NewPersistentVolumeInformer(client, 0, cache.Indexers{classIndex: indexBy(volumeClasses)}),
		queue:   newQueue(VACName),
	}
	if _, err := c.classes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.classChanged,
		UpdateFunc: func(_, obj any) { c.classChanged(obj) },
	}); err != nil {
		return nil, err
	}
	if _, err := c.claims.AddEventHandler(c.referrerHandler(claimClasses)); err != nil {
		return nil, err
	}
	_, err := c.volumes.AddEventHandler(c.referrerHandler(volumeClasses))
	return c, err
}

// Run syncs classes with workers goroutines until ctx is done.
func (c *Classes) Run(ctx context.Context, workers int) {
	c.logger.Info("starting")
	defer c.logger.Info("stopped")
	workloop.Run(ctx, c.queue, workers, workloop.Worker(c.queue, c.sync, func(key string, err error) {
		c.logger.Debug("sync failed", "class", key, "err", err)
	}), c.classes, c.claims, c.volumes)
}

func (c *Classes) classChanged(obj any) {
	vac, ok := obj.(*storagev1.VolumeAttributesClass)
	if ok && (needsFinalizer(vac, storageprotection.VACFinalizer) || deletionCandidate(vac, storageprotection.VACFinalizer)) {
		c.queue.Add(vac.Name)
	}
}

// referrerHandler enqueues the classes a claim or volume no longer names:
// those it named before an update, and all of a deleted one's.
func (c *Classes) referrerHandler(names func(any) []string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			now := names(obj)
			for _, n := range names(old) {
				if !slices.Contains(now, n) {
					c.queue.Add(n)
				}
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			for _, n := range names(obj) {
				c.queue.Add(n)
			}
		},
	}
}

// sync removes the finalizer of a class being deleted once no claim or
// volume names it, and adds it to a live class without it.
func (c *Classes) sync(ctx context.Context, name string) error {
	obj, ok, err := c.classes.GetStore().GetByKey(name)
	if err != nil || !ok {
		return err
	}
	vac := obj.(*storagev1.VolumeAttributesClass)
	switch {
	case deletionCandidate(vac, storageprotection.VACFinalizer):
		if c.named(name) {
			return nil
		}
		if named, err := c.namedLive(ctx, name); err != nil || named {
			return err
		}
		vac = vac.DeepCopy()
		vac.Finalizers = slices.DeleteFunc(vac.Finalizers, func(f string) bool { return f == storageprotection.VACFinalizer })
	case needsFinalizer(vac, storageprotection.VACFinalizer):
		vac = vac.DeepCopy()
		vac.Finalizers = append(vac.Finalizers, storageprotection.VACFinalizer)
	default:
		return nil
	}
	_, err = c.client.StorageV1().VolumeAttributesClasses().Update(ctx, vac, metav1.UpdateOptions{})
	return err
}

// named reports whether a claim or volume in the caches names the class;
// an index that cannot be read counts as a use, as kube's loop counts it.
func (c *Classes) named(name string) bool {
	for _, inf := range []cache.SharedIndexInformer{c.volumes, c.claims} {
		objs, err := inf.GetIndexer().ByIndex(classIndex, name)
		if err != nil || len(objs) > 0 {
			return true
		}
	}
	return false
}

// namedLive asks the API what named says of the caches: a claim made
// just before the class's deletion may not be in them yet, and the class
// would lose its protection (kube's loop reads its caches only; the
// pvc-protection loop looks twice for the same reason).
func (c *Classes) namedLive(ctx context.Context, name string) (bool, error) {
	pvs, err := c.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for i := range pvs.Items {
		if slices.Contains(volumeClasses(&pvs.Items[i]), name) {
			return true, nil
		}
	}
	pvcs, err := c.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for i := range pvcs.Items {
		if slices.Contains(claimClasses(&pvcs.Items[i]), name) {
			return true, nil
		}
	}
	return false, nil
}

func indexBy(names func(any) []string) cache.IndexFunc {
	return func(obj any) ([]string, error) { return names(obj), nil }
}

// claimClasses are the classes a claim names: its spec's, its current
// one and the one a modification targets.
func claimClasses(obj any) []string {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return nil
	}
	var out []string
	add := func(n string) {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if pvc.Spec.VolumeAttributesClassName != nil {
		add(*pvc.Spec.VolumeAttributesClassName)
	}
	if pvc.Status.CurrentVolumeAttributesClassName != nil {
		add(*pvc.Status.CurrentVolumeAttributesClassName)
	}
	if s := pvc.Status.ModifyVolumeStatus; s != nil {
		add(s.TargetVolumeAttributesClassName)
	}
	return out
}

// volumeClasses is the class a volume's spec names.
func volumeClasses(obj any) []string {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok || pv.Spec.VolumeAttributesClassName == nil || *pv.Spec.VolumeAttributesClassName == "" {
		return nil
	}
	return []string{*pv.Spec.VolumeAttributesClassName}
}
