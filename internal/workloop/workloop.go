// Package workloop runs the loop of a controller fed by an informer and a
// work queue, the shape of kube's controllers: the informer, then, once its
// cache has synced, workers that take keys from the queue.
package workloop

import (
	"context"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// Queue is the part of a work queue the loop needs.
type Queue interface {
	ShutDown()
}

// Run runs the informers and, once their caches have synced, workers
// goroutines that call processNext until it returns false. When ctx is done
// it shuts queue down, which makes processNext return false, and returns
// once every goroutine it started has stopped.
func Run(ctx context.Context, queue Queue, workers int, processNext func(context.Context) bool, informers ...cache.SharedIndexInformer) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer queue.ShutDown()
	synced := make([]cache.InformerSynced, len(informers))
	for i, inf := range informers {
		wg.Go(func() { inf.RunWithContext(ctx) })
		synced[i] = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	for range workers {
		wg.Go(func() {
			for processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
}

// RateLimitedQueue is the part of a rate-limited work queue a worker needs.
type RateLimitedQueue[K comparable] interface {
	Queue
	Get() (K, bool)
	Done(K)
	Forget(K)
	AddRateLimited(K)
}

// Worker is the processNext of a controller whose keys are synced one at a
// time by sync: a key that synced is forgotten, one that failed comes back
// later (rate limited) and is logged by failed, unless ctx is done.
func Worker[K comparable](queue RateLimitedQueue[K], sync func(context.Context, K) error, failed func(K, error)) func(context.Context) bool {
	return func(ctx context.Context) bool {
		key, quit := queue.Get()
		if quit {
			return false
		}
		defer queue.Done(key)
		err := sync(ctx, key)
		switch {
		case err == nil:
			queue.Forget(key)
		case ctx.Err() != nil:
		default:
			failed(key, err)
			queue.AddRateLimited(key)
		}
		return true
	}
}
