package cache

import (
	"context"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// Writes, Count and CurrentResourceVersion go to the backend: the cache
// sees the results through its watch. Until it does, it is known to be
// behind (wrote), and consistent GETs go to the backend at once.

// Create stores obj in the backend.
func (c *Cacher) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	return c.wrote(out, c.backend.storage.Create(ctx, key, obj, out, ttl))
}

// GuaranteedUpdate updates key in the backend. Without a cachedExisting
// from the caller, the cache's copy saves the backend a read when it is
// current (and costs a retry when it is not).
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExisting runtime.Object) error {
	if cachedExisting == nil {
		cachedExisting = c.cachedCopy(key)
	}
	return c.wrote(dest, c.backend.storage.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, preconditions, tryUpdate, cachedExisting))
}

// Delete deletes key in the backend, offering the cache's copy as
// GuaranteedUpdate does.
func (c *Cacher) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExisting runtime.Object) error {
	if cachedExisting == nil {
		cachedExisting = c.cachedCopy(key)
	}
	return c.wrote(out, c.backend.storage.Delete(ctx, key, out, preconditions, validateDeletion, cachedExisting))
}

// wrote records the revision of a write's result, unless the write
// failed, and returns its error.
func (c *Cacher) wrote(out runtime.Object, err error) error {
	if err != nil {
		return err
	}
	if m, merr := meta.Accessor(out); merr == nil {
		if rv, perr := strconv.ParseUint(m.GetResourceVersion(), 10, 64); perr == nil {
			c.backendAt(rv)
		}
	}
	return nil
}

// Count counts in the backend.
func (c *Cacher) Count(ctx context.Context, key string) (int64, error) {
	return c.backend.storage.Count(ctx, key)
}

// CurrentResourceVersion returns the backend's current revision.
func (c *Cacher) CurrentResourceVersion(ctx context.Context) (uint64, error) {
	return c.backend.storage.CurrentResourceVersion(ctx)
}

// cachedCopy returns a copy of the cached object at key; nil if there is
// none or the key is invalid (the backend then says why).
func (c *Cacher) cachedCopy(key string) runtime.Object {
	key, err := storage.PrepareKey(c.resourcePrefix, key, false)
	if err != nil {
		return nil
	}
	c.mu.RLock()
	e, ok := c.hist.get(key)
	ready := c.status.ready
	c.mu.RUnlock()
	if !ok || !ready {
		return nil
	}
	obj, err := c.ownObject(e)
	if err != nil {
		return nil
	}
	return obj
}
