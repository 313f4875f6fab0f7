package garbagecollector

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// LazyResources are resources the collector watches only once they may
// hold objects: custom resources, of which a cluster may define thousands
// of kinds, most of them empty, each of which an informer would cost a
// watch and its memory. kube's collector watches them all. Until a lazy
// resource is watched its objects are neither owners in the graph (an
// owner missing from the graph is read from the server instead) nor
// dependents (it has none): watching it from its first object on keeps
// collection whole.
type LazyResources interface {
	// Lazy reports whether gr is watched lazily.
	Lazy(gr schema.GroupResource) bool
	// HasObjects reports whether gr holds an object now.
	HasObjects(ctx context.Context, gr schema.GroupResource) (bool, error)
	// OnWritable registers f, to be called with a lazy resource before a
	// request that may create its first object is served: f must not
	// block.
	OnWritable(f func(gr schema.GroupResource))
}

// writable starts watching gr, which may be getting its first object: at
// once if discovery has shown it, else at the next discovery, which it
// asks for.
func (c *Controller) writable(ctx context.Context, gr schema.GroupResource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	if gvr, ok := c.dormant[gr]; ok {
		delete(c.dormant, gr)
		c.logger.Debug("watching a lazy resource", "resource", gvr.String())
		c.monitors[gvr] = c.newMonitor(ctx, gvr)
		return
	}
	for gvr := range c.monitors {
		if gvr.GroupResource() == gr {
			return
		}
	}
	c.wanted[gr] = true
	c.wakeDiscovery()
}

// startLazy decides, for the lazy resources of a discovery, which to
// watch: those with objects now, and those asked for meanwhile. It
// returns the informers started. Called without c.mu held.
func (c *Controller) startLazy(ctx context.Context, lazy []schema.GroupVersionResource) []cache.InformerSynced {
	var fresh []cache.InformerSynced
	for _, gvr := range lazy {
		gr := gvr.GroupResource()
		has, err := c.lazy.HasObjects(ctx, gr)
		if err != nil {
			c.logger.Debug("lazy resource: watching it, unable to tell whether it has objects", "resource", gvr.String(), "err", err)
			has = true
		}
		c.mu.Lock()
		if _, ok := c.monitors[gvr]; !ok && !c.stopped {
			if has || c.wanted[gr] {
				m := c.newMonitor(ctx, gvr)
				c.monitors[gvr] = m
				fresh = append(fresh, m.informer.HasSynced)
			} else {
				c.dormant[gr] = gvr
			}
		}
		delete(c.wanted, gr)
		c.mu.Unlock()
	}
	return fresh
}
