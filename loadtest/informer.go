package loadtest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
)

// listThenWatch is a ListWatch that tells reflectors it cannot stream
// lists, so that they list and then watch.
type listThenWatch struct{ *cache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// informer creates N config maps, then times Runs syncs of a list+watch
// informer and of a WatchList one (client-go's default): from Run to
// HasSynced with all N objects in the store.
func (r *runner) informer(ctx context.Context, ns string, res *Result) error {
	ic := r.cfg.Informer
	res.Params = map[string]int{"objects": ic.N, "runs": ic.Runs, "objectBytes": r.cfg.ObjectBytes}
	fill := NewRecorder()
	createConfigMaps(ctx, r.client.Kube, ns, "informer", ic.N, r.cfg.Concurrency, r.cfg.ObjectBytes, fill, "create")
	if err := errorOf(ctx, fill); err != nil {
		return fmt.Errorf("creating %d config maps: %w", ic.N, err)
	}
	rec := NewRecorder()
	before := r.client.WatchLists()
	start := time.Now()
	for range ic.Runs {
		lw := cache.NewListWatchFromClient(r.client.Kube.CoreV1().RESTClient(), "configmaps", ns, fields.Everything())
		_ = rec.Time("list+watch", func() error { return syncInformer(ctx, listThenWatch{lw}, ic.N) })
		_ = rec.Time("watchlist", func() error { return syncInformer(ctx, lw, ic.N) })
	}
	res.Ops = rec.Ops(time.Since(start))
	streamed := r.client.WatchLists() - before
	res.Metrics = map[string]float64{"watchListRequests": float64(streamed)}
	if streamed < int64(ic.Runs) {
		return fmt.Errorf("the WatchList informer sent %d streaming requests in %d runs: did it fall back to list+watch?", streamed, ic.Runs)
	}
	return errorOf(ctx, rec)
}

// syncInformer runs an informer over lw until it has synced, checks that
// it holds want objects, and stops it.
func syncInformer(ctx context.Context, lw cache.ListerWatcher, want int) error {
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// Stopping the informer cancels its watch: not an error worth a log line.
	err := inf.SetWatchErrorHandlerWithContext(func(hctx context.Context, r *cache.Reflector, err error) {
		if ctx.Err() == nil {
			cache.DefaultWatchErrorHandler(hctx, r, err)
		}
	})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	// The checker's channel, unlike WaitForCacheSync, does not poll.
	select {
	case <-inf.HasSyncedChecker().Done():
	case <-ctx.Done():
		return fmt.Errorf("informer did not sync: %w", ctx.Err())
	}
	// A list+watch informer lists at resourceVersion "0": the watch cache
	// may answer from a state a little older than the creates (kube's
	// too), and the watch then brings the rest. Synced means all of them
	// are in the store.
	own := ownObjects(inf.GetStore())
	for own < want && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
		own = ownObjects(inf.GetStore())
	}
	if own != want {
		return fmt.Errorf("informer synced with %d objects of the tool's, want %d", own, want)
	}
	return nil
}

// ownObjects counts the tool's config maps in store.
func ownObjects(store cache.Store) int {
	own := 0
	for _, o := range store.List() {
		if o.(*corev1.ConfigMap).Labels[toolLabel] == toolLabelValue {
			own++
		}
	}
	return own
}
