package cache

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// Get reads key. resourceVersion "" (the latest state) is served by the
// cache once it has seen a revision of the backend read after the call,
// as consistent lists are, so that it never misses a write acknowledged
// before it (kube reads these from etcd); any other is a lower bound the
// cache satisfies if it has reached it. What the cache cannot serve (not
// ready, not caught up in time) the backend does.
func (c *Cacher) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	prepared, err := storage.PrepareKey(c.resourcePrefix, key, false)
	if err != nil {
		return err
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	if opts.ResourceVersion == "" {
		ok, err := c.waitConsistent(ctx)
		if err != nil {
			return err
		}
		if !ok {
			return c.storage.Get(ctx, key, opts, out)
		}
	}
	c.mu.RLock()
	ready, current, state := c.ready, c.rv, c.hist.latest()
	c.mu.RUnlock()
	if !ready || rv > current {
		return c.storage.Get(ctx, key, opts, out)
	}
	e, ok := get(state, prepared)
	if !ok {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(out)
		}
		return storage.NewError(storage.ErrNotFound, key, int64(current), "")
	}
	return copyInto(out, e.obj)
}

// copyInto sets *out to a deep copy of obj, which must be of out's type.
func copyInto(out, obj runtime.Object) error {
	dst := reflect.ValueOf(out)
	src := reflect.ValueOf(obj.DeepCopyObject())
	if dst.Kind() != reflect.Pointer || dst.IsNil() || dst.Type() != src.Type() {
		return fmt.Errorf("cannot read a %T into a %T", obj, out)
	}
	dst.Elem().Set(src.Elem())
	return nil
}
