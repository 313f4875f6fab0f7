package resourcequota

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// replenished are the resources whose deletes give usage back at once, as
// kube's controller replenishes: pods (also when they finish) through a
// typed informer, the other core resources quotas name by metadata only.
// Objects of other resources (count/<resource>.<group>) are given back
// through the watches quotas that count them start (watches.go).
var replenished = []schema.GroupResource{{Resource: "services"}, {Resource: "persistentvolumeclaims"},
	{Resource: "configmaps"}, {Resource: "secrets"}, {Resource: "replicationcontrollers"}}

// replenishers are the informers that enqueue the quotas of a namespace
// an object left, or whose pod finished.
func (c *Controller) replenishers() ([]cache.SharedIndexInformer, error) {
	pods := coreinformers.NewPodInformer(c.cfg.Client, "", 0, cache.Indexers{})
	// Only the phase matters here (and the name and namespace): the rest
	// of every pod of the cluster need not stay in memory.
	_ = pods.SetTransform(func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			return &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, ResourceVersion: p.ResourceVersion},
				Status:     corev1.PodStatus{Phase: p.Status.Phase},
			}, nil
		}
		return obj, nil
	})
	podGR := schema.GroupResource{Resource: "pods"}
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*corev1.Pod)
			p, ok2 := obj.(*corev1.Pod)
			if ok1 && ok2 && !finished(o) && finished(p) {
				c.replenish(podGR, p.Namespace)
			}
		},
		DeleteFunc: func(obj any) { c.replenishDeleted(podGR, obj) },
	})
	if err != nil {
		return nil, err
	}
	out := []cache.SharedIndexInformer{pods}
	for _, gr := range replenished {
		inf := c.deletesInformer(gr.WithVersion("v1"))
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) { c.replenishDeleted(gr, obj) }}); err != nil {
			return nil, err
		}
		out = append(out, inf)
	}
	return out, nil
}

// deletesInformer is a metadata informer of gvr that keeps, of each
// object, only the name and namespace a delete needs: a full
// PartialObjectMetadata (managed fields included) of every config map and
// secret of the cluster was a third of a filled server's heap.
func (c *Controller) deletesInformer(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	inf := metadatainformer.NewFilteredMetadataInformer(c.cfg.Metadata, gvr, "", 0, cache.Indexers{}, nil).Informer()
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				Name: m.Name, Namespace: m.Namespace, ResourceVersion: m.ResourceVersion,
			}}, nil
		}
		return obj, nil
	})
	return inf
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// replenishDeleted replenishes the namespace of a deleted object (or of
// the last state an informer knew of it).
func (c *Controller) replenishDeleted(gr schema.GroupResource, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, ok := obj.(interface{ GetNamespace() string }); ok {
		c.replenish(gr, m.GetNamespace())
	}
}

// replenish recounts the namespace's quotas that charge objects of gr.
func (c *Controller) replenish(gr schema.GroupResource, namespace string) {
	for _, obj := range c.informer.GetStore().List() {
		q, ok := obj.(*corev1.ResourceQuota)
		if !ok || q.Namespace != namespace {
			continue
		}
		for _, r := range resourcesOf(q.Spec.Hard) {
			if r == gr {
				c.enqueue(q)
				break
			}
		}
	}
}
