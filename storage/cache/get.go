package cache

import (
	"context"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// Get reads key. resourceVersion "" (the latest state) is served by the
// cache if it has already seen a revision of the backend read after the
// call, so that it never misses a write acknowledged before it (kube
// reads these from etcd); it does not wait to get there, as lists do. Any
// other is a lower bound the cache satisfies if it has reached it. What
// the cache cannot serve (not ready, behind) the backend does.
func (c *Cacher) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	ctx, span := startGetSpan(ctx, key, opts)
	defer span.End()
	e, ok, err := c.getElement(ctx, key, opts)
	switch {
	case err != nil:
		return err
	case !ok:
		return c.backend.storage.Get(ctx, key, opts, out)
	case e == nil:
		return runtime.SetZeroValue(out)
	}
	return c.objectInto(e, out)
}

// getElement finds key in a state that satisfies opts. ok false sends
// the read to the backend; a nil element is a missing key that
// opts.IgnoreNotFound lets through.
func (c *Cacher) getElement(ctx context.Context, key string, opts storage.GetOptions) (*element, bool, error) {
	prepared, err := storage.PrepareKey(c.resourcePrefix, key, false)
	if err != nil {
		return nil, false, err
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, false, err
	}
	if opts.ResourceVersion == "" {
		if !c.freshNow(ctx) {
			return nil, false, nil
		}
	}
	c.mu.RLock()
	ready, current := c.status.ready, c.rv
	e, ok := c.hist.get(prepared)
	c.mu.RUnlock()
	if !ready || rv > current {
		return nil, false, nil
	}
	if !ok {
		if opts.IgnoreNotFound {
			return nil, true, nil
		}
		return nil, true, storage.NewError(storage.ErrNotFound, key, int64(current), "")
	}
	return e, true, nil
}
