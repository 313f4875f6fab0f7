package controlplane

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/controlplane/controllers/garbagecollector"
	"github.com/capstan-io/capstan/storage"
)

// builtinResources tells the garbage collector which built-in resources it
// may watch lazily: all of them. Most of the ~55 it would watch hold no
// object in a fresh or small cluster, and a loopback informer for each
// costs goroutines, a watch and memory for nothing. A resource is watched
// from the first write that may create one of its objects, or at once if
// it holds objects when the collector looks.
type builtinResources struct {
	mu        sync.Mutex // guards resources and writable
	resources map[schema.GroupResource]*builtinResource
	writable  []func(gr schema.GroupResource)
}

// builtinResource is one built-in resource; a resource served in several
// versions (autoscaling's) is one.
type builtinResource struct {
	gr        schema.GroupResource
	storage   storage.Interface
	keyPrefix string
	// written is set once a write that may create was seen; only the first
	// takes the lock.
	written atomic.Bool
}

var _ garbagecollector.LazyResources = (*builtinResources)(nil)

// add registers a built-in resource and returns the function its store
// calls before a write that may create an object (StoreConfig.MayCreate).
func (b *builtinResources) add(gr schema.GroupResource, st storage.Interface, keyPrefix string) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.resources == nil {
		b.resources = map[schema.GroupResource]*builtinResource{}
	}
	r, ok := b.resources[gr]
	if !ok {
		r = &builtinResource{gr: gr, storage: st, keyPrefix: keyPrefix}
		b.resources[gr] = r
	}
	return func() {
		if !r.written.Load() {
			b.mayCreate(r)
		}
	}
}

// mayCreate tells the registered functions, once, that r may get objects.
func (b *builtinResources) mayCreate(r *builtinResource) {
	b.mu.Lock()
	if r.written.Swap(true) {
		b.mu.Unlock()
		return
	}
	fs := b.writable
	b.mu.Unlock()
	for _, f := range fs {
		f(r.gr)
	}
}

func (b *builtinResources) resource(gr schema.GroupResource) *builtinResource {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.resources[gr]
}

// Lazy reports whether gr is a built-in resource.
func (b *builtinResources) Lazy(gr schema.GroupResource) bool { return b.resource(gr) != nil }

// HasObjects counts gr's objects in etcd.
func (b *builtinResources) HasObjects(ctx context.Context, gr schema.GroupResource) (bool, error) {
	r := b.resource(gr)
	if r == nil {
		return true, nil
	}
	n, err := r.storage.Count(ctx, r.keyPrefix)
	return n > 0, err
}

// OnWritable registers f, and calls it at once with the resources written
// already.
func (b *builtinResources) OnWritable(f func(gr schema.GroupResource)) {
	b.mu.Lock()
	b.writable = append(b.writable, f)
	var written []schema.GroupResource
	for gr, r := range b.resources {
		if r.written.Load() {
			written = append(written, gr)
		}
	}
	b.mu.Unlock()
	for _, gr := range written {
		f(gr)
	}
}

// lazyUnion joins the lazy resources of the chain: custom resources and
// built-in ones.
type lazyUnion []garbagecollector.LazyResources

func (u lazyUnion) owner(gr schema.GroupResource) garbagecollector.LazyResources {
	for _, l := range u {
		if l.Lazy(gr) {
			return l
		}
	}
	return nil
}

func (u lazyUnion) Lazy(gr schema.GroupResource) bool { return u.owner(gr) != nil }

func (u lazyUnion) HasObjects(ctx context.Context, gr schema.GroupResource) (bool, error) {
	if l := u.owner(gr); l != nil {
		return l.HasObjects(ctx, gr)
	}
	return true, nil
}

func (u lazyUnion) OnWritable(f func(gr schema.GroupResource)) {
	for _, l := range u {
		l.OnWritable(f)
	}
}
