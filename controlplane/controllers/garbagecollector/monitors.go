package garbagecollector

import (
	"context"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// mapping is how an owner reference's apiVersion and kind are reached.
type mapping struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

// monitor is the metadata informer of one resource.
type monitor struct {
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	done     chan struct{}
}

// ignored resources take no part in garbage collection, as in kube: events
// are many, short-lived and never owners.
var ignored = map[schema.GroupResource]bool{
	{Resource: "events"}:                         true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// discovered splits discovery into the kinds owner references may name (every
// served version) and the resources to watch: those of each group's preferred
// version that can be listed, watched and deleted.
func discovered(groups []*metav1.APIGroup, lists []*metav1.APIResourceList) (map[schema.GroupVersionKind]mapping, map[schema.GroupVersionResource]bool) {
	preferred := map[string]string{}
	for _, g := range groups {
		if g != nil {
			preferred[g.Name] = g.PreferredVersion.Version
		}
	}
	kinds := map[schema.GroupVersionKind]mapping{}
	watch := map[schema.GroupVersionResource]bool{}
	for _, list := range lists {
		if list == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			kinds[gv.WithKind(r.Kind)] = mapping{gvr: gvr, namespaced: r.Namespaced}
			if p, ok := preferred[gv.Group]; ok && p != gv.Version {
				continue
			}
			if ignored[gvr.GroupResource()] {
				continue
			}
			if slices.Contains(r.Verbs, "delete") && slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") {
				watch[gvr] = true
			}
		}
	}
	return kinds, watch
}

// resync brings the kinds and the informers up to date with discovery. New
// informers fill while the workers wait, at most syncTimeout.
func (c *Controller) resync(ctx context.Context) {
	groups, lists, err := c.discovery.ServerGroupsAndResources()
	if err != nil {
		// A partial answer (one aggregated group down) is still used.
		c.logger.Debug("discovery", "err", err)
		if len(lists) == 0 {
			return
		}
	}
	kinds, watch := discovered(groups, lists)

	c.mu.Lock()
	c.mapping = kinds
	var fresh []cache.InformerSynced
	var lazy []schema.GroupVersionResource
	for gvr := range watch {
		if _, ok := c.monitors[gvr]; ok {
			continue
		}
		if c.isLazy(gvr.GroupResource()) {
			if d, ok := c.dormant[gvr.GroupResource()]; !ok || d != gvr {
				lazy = append(lazy, gvr)
			}
			continue
		}
		m := c.newMonitor(ctx, gvr)
		c.monitors[gvr] = m
		fresh = append(fresh, m.informer.HasSynced)
	}
	var stale []*monitor
	for gvr, m := range c.monitors {
		if !watch[gvr] {
			stale = append(stale, m)
			delete(c.monitors, gvr)
		}
	}
	for gr, gvr := range c.dormant {
		if !watch[gvr] {
			delete(c.dormant, gr)
		}
	}
	for gr := range c.wanted {
		if !c.isLazy(gr) {
			delete(c.wanted, gr) // its CRD is gone
		}
	}
	c.mu.Unlock()
	for _, m := range stale {
		m.cancel()
	}
	fresh = append(fresh, c.startLazy(ctx, lazy)...)
	if len(fresh) == 0 {
		return
	}
	c.logger.Debug("watching new resources", "count", len(fresh))
	c.workers.Lock()
	defer c.workers.Unlock()
	wctx, cancel := context.WithTimeout(ctx, c.syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(wctx.Done(), fresh...) {
		c.logger.Info("informers of new resources not synced in time", "timeout", c.syncTimeout)
		return
	}
	// Let the graph take in what the informers delivered.
	_ = wait.PollUntilContextCancel(wctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		return c.events.Len() == 0, nil
	})
}

// newMonitor starts the metadata informer of gvr. Its cache keeps each
// object as the graph's node of it, which the graph then holds too, rather
// than the informer's PartialObjectMetadata: each object is held once.
func (c *Controller) newMonitor(ctx context.Context, gvr schema.GroupVersionResource) *monitor {
	inf := metadatainformer.NewFilteredMetadataInformer(c.metadata, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	_ = inf.SetTransform(func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			return newNode(&gvr, m), nil
		}
		return obj, nil
	})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.observe(gvr, obj, false) },
		UpdateFunc: func(_, obj any) { c.observe(gvr, obj, false) },
		DeleteFunc: func(obj any) { c.observe(gvr, obj, true) },
	})
	mctx, cancel := context.WithCancel(ctx)
	m := &monitor{informer: inf, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		inf.RunWithContext(mctx)
	}()
	return m
}

// isLazy reports whether gr is watched lazily. The collector's own view of
// CRDs is never lazy.
func (c *Controller) isLazy(gr schema.GroupResource) bool {
	return c.lazy != nil && gr != crds && c.lazy.Lazy(gr)
}

// stopMonitors stops every informer and waits for them.
func (c *Controller) stopMonitors() {
	c.mu.Lock()
	c.stopped = true
	ms := c.monitors
	c.monitors = map[schema.GroupVersionResource]*monitor{}
	c.mu.Unlock()
	for _, m := range ms {
		m.cancel()
	}
	for _, m := range ms {
		<-m.done
	}
}

// observe queues an informer notification for the graph.
func (c *Controller) observe(gvr schema.GroupVersionResource, obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	n, ok := obj.(*node)
	if !ok {
		return
	}
	c.events.Add(&event{node: n, deleted: deleted})
	if gvr.GroupResource() == crds {
		c.crdChanged()
	}
}

// crdChanged asks for an early discovery refresh: a CRD established or
// removed changes what there is to watch. A burst of CRD changes (1,000
// created at once) asks once per crdSettle, and once more a little later,
// as discovery may lag.
func (c *Controller) crdChanged() {
	if !c.crdPending.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(crdSettle, func() {
		c.crdPending.Store(false)
		c.wakeDiscovery()
		time.AfterFunc(2*crdSettle, c.wakeDiscovery)
	})
}

// crdSettle is how long CRD changes gather before discovery is refreshed.
const crdSettle = 2 * time.Second

var crds = schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}

// lookup returns how the kind of an owner reference is reached.
func (c *Controller) lookup(apiVersion, kind string) (mapping, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return mapping{}, &unknownKindError{gvk: schema.GroupVersionKind{Kind: kind}}
	}
	gvk := gv.WithKind(kind)
	c.mu.Lock()
	m, ok := c.mapping[gvk]
	c.mu.Unlock()
	if !ok {
		return mapping{}, &unknownKindError{gvk: gvk}
	}
	return m, nil
}
