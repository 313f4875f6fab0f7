package node

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// refsIndex indexes pods (bound to a node) and persistent volumes (bound to
// a claim) by the objects they make readable (see podRefs, pvSecretRefs).
const refsIndex = "capstan.io/node-authorizer-refs"

// Graph answers whether a node may reach an object: kube's node
// authorization graph, kept as indexes of informers' caches rather than as
// vertices and edges. A node reaches
//
//	a pod bound to it;
//	a secret, config map, claim, service account or resource claim
//	  a pod bound to it refers to;
//	a persistent volume bound to a claim it reaches, and the secrets such a
//	  volume's kubelet-side plugin names;
//	a volume attachment naming it.
type Graph struct {
	pods, pvs, attachments cache.Indexer
}

// NewGraph registers the informers the graph reads with f, which must be
// started afterwards; Synced tells when their caches are full.
func NewGraph(f informers.SharedInformerFactory) (*Graph, []cache.InformerSynced, error) {
	pods := f.Core().V1().Pods().Informer()
	pvs := f.Core().V1().PersistentVolumes().Informer()
	vas := f.Storage().V1().VolumeAttachments().Informer()
	if err := pods.AddIndexers(cache.Indexers{refsIndex: podIndex}); err != nil {
		return nil, nil, err
	}
	if err := pvs.AddIndexers(cache.Indexers{refsIndex: pvIndex}); err != nil {
		return nil, nil, err
	}
	g := &Graph{pods: pods.GetIndexer(), pvs: pvs.GetIndexer(), attachments: vas.GetIndexer()}
	return g, []cache.InformerSynced{pods.HasSynced, pvs.HasSynced, vas.HasSynced}, nil
}

func podIndex(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		return nil, nil
	}
	return podRefs(pod), nil
}

func pvIndex(obj any) ([]string, error) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return nil, nil
	}
	return pvSecretRefs(pv), nil
}

// Reaches reports whether node may reach the object of kind (one of the
// kind constants) called namespace/name. A nil graph (informers not synced
// yet) reaches nothing.
func (g *Graph) Reaches(node, kind, namespace, name string) bool {
	return g != nil && g.reaches(node, kind, namespace, name)
}

func (g *Graph) reaches(node, kind, namespace, name string) bool {
	switch kind {
	case kindPod:
		pod, ok := get[*corev1.Pod](g.pods, namespace+"/"+name)
		return ok && pod.Spec.NodeName == node
	case kindPV:
		pv, ok := get[*corev1.PersistentVolume](g.pvs, name)
		return ok && pv.Spec.ClaimRef != nil && g.reaches(node, kindPVC, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name)
	case kindVA:
		va, ok := get[*storagev1.VolumeAttachment](g.attachments, name)
		return ok && va.Spec.NodeName == node
	case kindResourceSlice:
		// The graph keeps no ResourceSlices (a difference from kube,
		// docs/compatibility.md): a node lists and watches its own by
		// nodeName, but cannot get one by name.
		return false
	}
	if g.podOnNodeRefers(node, ref(kind, namespace, name)) {
		return true
	}
	if kind != kindSecret {
		return false
	}
	pvs, _ := g.pvs.ByIndex(refsIndex, ref(kind, namespace, name))
	for _, obj := range pvs {
		pv := obj.(*corev1.PersistentVolume)
		if g.reaches(node, kindPVC, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name) {
			return true
		}
	}
	return false
}

// podOnNodeRefers reports whether a pod bound to node refers to key.
func (g *Graph) podOnNodeRefers(node, key string) bool {
	pods, _ := g.pods.ByIndex(refsIndex, key)
	for _, obj := range pods {
		if obj.(*corev1.Pod).Spec.NodeName == node {
			return true
		}
	}
	return false
}

func get[T any](idx cache.Indexer, key string) (T, bool) {
	var zero T
	obj, ok, err := idx.GetByKey(key)
	if err != nil || !ok {
		return zero, false
	}
	t, ok := obj.(T)
	return t, ok
}
