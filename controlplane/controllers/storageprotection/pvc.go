// Package storageprotection is kube-controller-manager's pvc-protection,
// pv-protection and volumeattributesclass-protection controllers,
// in-process: they keep the protection finalizers (which
// StorageObjectInUseProtection gives new objects) on claims, volumes and
// VolumeAttributesClasses, and remove them from one being deleted once
// nothing uses it: a claim once no pod on a node mounts it, a volume once
// it is no longer bound, a class once no claim or volume names it. The
// pvc-protection loop also keeps a bound claim's Unused condition, as
// kube's does with its PersistentVolumeClaimUnusedSinceTime gate (beta, on
// in v1.37).
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

// The controllers' names, kube-controller-manager's.
const (
	PVCName = "persistentvolumeclaim-protection-controller"
	PVName  = "persistentvolume-protection-controller"
)

// podClaimIndex indexes pods by the namespace/name of the claims they use.
const podClaimIndex = "pod-pvc"

// Claims is the pvc-protection loop.
type Claims struct {
	client kubernetes.Interface
	logger *slog.Logger
	claims cache.SharedIndexInformer
	pods   cache.SharedIndexInformer
	queue  workqueue.TypedRateLimitingInterface[string]
}

// NewClaims returns the loop; Run starts it.
func NewClaims(client kubernetes.Interface, logger *slog.Logger) (*Claims, error) {
	if client == nil || logger == nil {
		return nil, errors.New("pvc-protection: client and logger are required")
	}
	c := &Claims{
		client: client,
		logger: logger.With("controller", PVCName),
		claims: coreinformers.NewPersistentVolumeClaimInformer(client, "", 0, cache.Indexers{}),
		pods:   coreinformers.NewPodInformer(client, "", 0, cache.Indexers{podClaimIndex: podClaimKeys}),
		queue:  newQueue(PVCName),
	}
	if _, err := c.claims.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.claimChanged,
		UpdateFunc: func(_, obj any) { c.claimChanged(obj) },
	}); err != nil {
		return nil, err
	}
	if err := c.pods.SetTransform(claimView); err != nil {
		return nil, err
	}
	_, err := c.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.podChanged,
		UpdateFunc: func(_, obj any) { c.podChanged(obj) },
		DeleteFunc: c.podChanged,
	})
	return c, err
}

// claimView keeps of a pod what the loop decides by (holdsClaim,
// referencesClaim, podClaimKeys): a cluster's pods are held for as long as
// the loop runs, and a pod's containers, environment and status would be
// most of them. The pods of the API (inUse's second look) are whole.
func claimView(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil // a tombstone: its pod was viewed when stored
	}
	v := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			DeletionTimestamp: pod.DeletionTimestamp, DeletionGracePeriodSeconds: pod.DeletionGracePeriodSeconds},
		Spec:   corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: corev1.PodStatus{Phase: pod.Status.Phase},
	}
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.PersistentVolumeClaim != nil:
			v.Spec.Volumes = append(v.Spec.Volumes, corev1.Volume{Name: vol.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: vol.PersistentVolumeClaim.ClaimName}}})
		case vol.Ephemeral != nil:
			v.Spec.Volumes = append(v.Spec.Volumes, corev1.Volume{Name: vol.Name, VolumeSource: corev1.VolumeSource{
				Ephemeral: &corev1.EphemeralVolumeSource{}}})
		}
	}
	// Whether each container may still run (terminated): its state's kind.
	states := func(in []corev1.ContainerStatus) []corev1.ContainerStatus {
		var out []corev1.ContainerStatus
		for _, s := range in {
			var st corev1.ContainerState
			switch {
			case s.State.Terminated != nil:
				st.Terminated = &corev1.ContainerStateTerminated{}
			case s.State.Waiting != nil:
				st.Waiting = &corev1.ContainerStateWaiting{}
			case s.State.Running != nil:
				st.Running = &corev1.ContainerStateRunning{}
			}
			out = append(out, corev1.ContainerStatus{State: st})
		}
		return out
	}
	v.Status.InitContainerStatuses = states(pod.Status.InitContainerStatuses)
	v.Status.ContainerStatuses = states(pod.Status.ContainerStatuses)
	v.Status.EphemeralContainerStatuses = states(pod.Status.EphemeralContainerStatuses)
	return v, nil
}

func newQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}

// Run syncs claims with workers goroutines until ctx is done.
func (c *Claims) Run(ctx context.Context, workers int) {
	c.logger.Info("starting")
	defer c.logger.Info("stopped")
	workloop.Run(ctx, c.queue, workers, workloop.Worker(c.queue, c.sync, func(key string, err error) {
		c.logger.Debug("sync failed", "claim", key, "err", err)
	}), c.claims, c.pods)
}

func (c *Claims) claimChanged(obj any) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if ok && (unusedCondition(pvc) == nil || needsFinalizer(pvc, storageprotection.PVCFinalizer) || deletionCandidate(pvc, storageprotection.PVCFinalizer)) {
		c.queue.Add(pvc.Namespace + "/" + pvc.Name)
	}
}

// podChanged enqueues the claims of a pod that changed or went: one may
// no longer be in use.
func (c *Claims) podChanged(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	keys, _ := podClaimKeys(obj)
	for _, k := range keys {
		c.queue.Add(k)
	}
}

func (c *Claims) sync(ctx context.Context, key string) error {
	obj, ok, err := c.claims.GetStore().GetByKey(key)
	if err != nil || !ok {
		return err
	}
	pvc := obj.(*corev1.PersistentVolumeClaim)
	if pvc.DeletionTimestamp == nil && pvc.Status.Phase == corev1.ClaimBound {
		if pvc, err = c.markUnused(ctx, pvc); err != nil {
			return err
		}
	}
	if deletionCandidate(pvc, storageprotection.PVCFinalizer) {
		used, err := c.inUse(ctx, pvc, holdsClaim)
		if err != nil || used {
			return err
		}
		pvc = pvc.DeepCopy()
		pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == storageprotection.PVCFinalizer })
		_, err = c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		return err
	}
	if needsFinalizer(pvc, storageprotection.PVCFinalizer) {
		pvc = pvc.DeepCopy()
		pvc.Finalizers = append(pvc.Finalizers, storageprotection.PVCFinalizer)
		_, err = c.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
		return err
	}
	return nil
}

// inUse asks the pod cache, then (as the cache may lag behind a pod just
// made) the API, whether a pod uses the claim by the test uses.
func (c *Claims) inUse(ctx context.Context, pvc *corev1.PersistentVolumeClaim, uses func(*corev1.Pod, *corev1.PersistentVolumeClaim) bool) (bool, error) {
	objs, err := c.pods.GetIndexer().ByIndex(podClaimIndex, pvc.Namespace+"/"+pvc.Name)
	if err != nil {
		return false, err
	}
	for _, obj := range objs {
		if uses(obj.(*corev1.Pod), pvc) {
			return true, nil
		}
	}
	pods, err := c.client.CoreV1().Pods(pvc.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for i := range pods.Items {
		if uses(&pods.Items[i], pvc) {
			return true, nil
		}
	}
	return false, nil
}

// holdsClaim is kube's test of a pod holding a claim against deletion: the
// pod is on a node and mounts the claim, or its generic ephemeral volume
// is the claim (the pod owns it) and the pod has not been shut down.
func holdsClaim(pod *corev1.Pod, pvc *corev1.PersistentVolumeClaim) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	shutDown := pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name {
			return true
		}
		if v.Ephemeral != nil && !shutDown && pod.Name+"-"+v.Name == pvc.Name && ownedBy(pvc, pod) {
			return true
		}
	}
	return false
}

func ownedBy(pvc *corev1.PersistentVolumeClaim, pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pvc)
	return ref != nil && ref.UID == pod.UID
}

// podClaimKeys are the namespace/name keys of the claims a pod's volumes
// name, its generic ephemeral volumes' claims included.
func podClaimKeys(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			keys = append(keys, pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			keys = append(keys, pod.Namespace+"/"+pod.Name+"-"+v.Name)
		}
	}
	return keys, nil
}

// needsFinalizer: a live object without the finalizer.
func needsFinalizer(obj metav1.Object, finalizer string) bool {
	return obj.GetDeletionTimestamp() == nil && !slices.Contains(obj.GetFinalizers(), finalizer)
}

// deletionCandidate: an object being deleted that still has the finalizer.
func deletionCandidate(obj metav1.Object, finalizer string) bool {
	return obj.GetDeletionTimestamp() != nil && slices.Contains(obj.GetFinalizers(), finalizer)
}
