package storagefactory

import (
	"context"

	"github.com/capstan-io/capstan/storage"
)

// NewServed returns the storage of a resource that is served for a while
// only: a custom resource, while its CRD stays established and unchanged.
// Its watch cache, if it gets one, runs from now until stop is called, and
// is not one of the caches readiness waits for (kube's caches of custom
// resources are not either); until it has filled, its reads go to etcd.
// Before RunCaches, or after its context ended, there is no cache.
func (f *Factory) NewServed(spec Spec) (st storage.Interface, stop func(), err error) {
	f.mu.Lock()
	running := f.running
	f.mu.Unlock()
	if running == nil || running.Err() != nil || !f.cached(spec) {
		spec.NoWatchCache = true
		st, err = f.New(spec)
		return st, func() {}, err
	}
	spec.NoWatchCache = true
	store, err := f.New(spec)
	if err != nil {
		return nil, nil, err
	}
	c, err := f.newCache(spec, store)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(running)
	go c.Run(ctx)
	return c, cancel, nil
}
