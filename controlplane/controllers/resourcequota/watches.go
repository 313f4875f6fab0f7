package resourcequota

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// watches are the metadata informers of the resources quotas count by
// count/<resource>.<group> beyond those replenishers watches always: as
// kube's quota monitor replenishes every counted resource when an object
// goes, but only for the resources some quota names, so that a cluster
// without such quotas keeps no watch per resource. Custom resources are
// found by discovery; one that is not served yet is looked for again at
// each resync, and one whose resource went away is dropped.
type watches struct {
	c *Controller
	// kick asks Run's goroutine to bring the watches in line with the
	// quotas; a buffer of one coalesces bursts of quota events.
	kick chan struct{}

	mu      sync.Mutex // guards running
	running map[schema.GroupResource]*watch
}

// watch is one running informer.
type watch struct{ stop context.CancelFunc }

func newWatches(c *Controller) *watches {
	return &watches{c: c, kick: make(chan struct{}, 1), running: map[schema.GroupResource]*watch{}}
}

// changed asks for the watches to follow the quotas.
func (w *watches) changed() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// run follows the quotas until ctx is done, then stops every watch.
func (w *watches) run(ctx context.Context) {
	defer w.stopAll()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
			w.sync(ctx)
		}
	}
}

// follow asks for the watches to follow the quotas when one resource q
// counts has none: a quota recounted once its custom resource is served
// starts the watch of it.
func (w *watches) follow(q *corev1.ResourceQuota) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, gr := range resourcesOf(q.Spec.Hard) {
		if !fixed(gr) && w.running[gr] == nil {
			w.changed()
			return
		}
	}
}

// fixed are the resources replenishers watches whatever the quotas, and
// resourcequotas, whose deletes the quota informer sees.
func fixed(gr schema.GroupResource) bool {
	if gr.Group != "" {
		return false
	}
	switch gr.Resource {
	case "pods", "resourcequotas":
		return true
	}
	for _, r := range replenished {
		if r == gr {
			return true
		}
	}
	return false
}

// wanted are the resources some quota counts that no fixed informer
// watches.
func (w *watches) wanted() map[schema.GroupResource]bool {
	out := map[schema.GroupResource]bool{}
	for _, obj := range w.c.informer.GetStore().List() {
		if q, ok := obj.(*corev1.ResourceQuota); ok {
			for _, gr := range resourcesOf(q.Spec.Hard) {
				if !fixed(gr) {
					out[gr] = true
				}
			}
		}
	}
	return out
}

// sync starts a watch for each wanted resource that has none and stops
// those no quota counts any more.
func (w *watches) sync(ctx context.Context) {
	want := w.wanted()
	w.mu.Lock()
	defer w.mu.Unlock()
	for gr, r := range w.running {
		if !want[gr] {
			r.stop()
			delete(w.running, gr)
		}
	}
	reset := false
	for gr := range want {
		if w.running[gr] != nil {
			continue
		}
		if err := w.startLocked(ctx, gr); err != nil {
			w.c.cfg.Logger.Debug("not watching a counted resource yet", "resource", gr.String(), "err", err)
			reset = true
		}
	}
	if reset {
		// Discovery is read again for the next try: a CRD may come.
		w.c.mapper.Reset()
	}
}

// startLocked starts the metadata informer of gr, which recounts a
// namespace's quotas when one of its objects is deleted.
func (w *watches) startLocked(ctx context.Context, gr schema.GroupResource) error {
	gvr, err := w.c.mapper.ResourceFor(gr.WithVersion(""))
	if err != nil {
		return err
	}
	inf := w.c.deletesInformer(gvr)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) { w.c.replenishDeleted(gr, obj) }}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &watch{stop: cancel}
	// A resource that is no longer served (its CRD deleted) stops its
	// watch rather than retrying forever; the next sync looks for it
	// again while a quota still counts it.
	err = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		if apierrors.IsNotFound(err) {
			w.gone(gr, r)
		}
	})
	if err != nil {
		cancel()
		return err
	}
	w.running[gr] = r
	go inf.RunWithContext(ctx)
	return nil
}

// gone stops the watch of a resource that went away, and forgets it
// unless another has replaced it.
func (w *watches) gone(gr schema.GroupResource, r *watch) {
	r.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running[gr] == r {
		delete(w.running, gr)
	}
}

func (w *watches) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for gr, r := range w.running {
		r.stop()
		delete(w.running, gr)
	}
}
