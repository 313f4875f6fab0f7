package storagefactory

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/etcd3"
)

// Object count parameters, kube's: stats are read every minute
// (--etcd-count-metric-poll-period), and those not refreshed for three
// minutes are stale.
const (
	DefaultCountPollPeriod = time.Minute
	countStaleAfter        = 3 * time.Minute
	// A stale count makes lists as costly as they can be: kube's
	// "infinite" count of objects of the largest size etcd takes.
	staleObjectCount = 1_000_000_000
	staleObjectSize  = 1_500_000
)

// objectCounts keeps the Stats of every resource's storage, read
// periodically, for API Priority and Fairness's estimate of lists.
type objectCounts struct {
	mu        sync.RWMutex // guards the maps
	reporters map[schema.GroupResource]storage.StatsReporter
	stats     map[schema.GroupResource]timedStats
	sizes     map[schema.GroupResource]*etcd3.SizeEstimator
}

type timedStats struct {
	storage.Stats
	at time.Time
}

// sizesOf is the size estimator shared by the stores of gr.
func (o *objectCounts) sizesOf(gr schema.GroupResource) *etcd3.SizeEstimator {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sizes == nil {
		o.sizes = map[schema.GroupResource]*etcd3.SizeEstimator{}
	}
	s, ok := o.sizes[gr]
	if !ok {
		s = &etcd3.SizeEstimator{}
		o.sizes[gr] = s
	}
	return s
}

// add makes the stats of gr come from r (replacing an earlier storage of
// gr, as a custom resource's when its CRD changes).
func (o *objectCounts) add(gr schema.GroupResource, r storage.StatsReporter) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.reporters == nil {
		o.reporters = map[schema.GroupResource]storage.StatsReporter{}
	}
	o.reporters[gr] = r
}

// refresh reads the stats of every storage once.
func (o *objectCounts) refresh(ctx context.Context, now func() time.Time) {
	o.mu.RLock()
	reporters := make(map[schema.GroupResource]storage.StatsReporter, len(o.reporters))
	for gr, r := range o.reporters {
		reporters[gr] = r
	}
	o.mu.RUnlock()
	for gr, r := range reporters {
		st, err := r.Stats(ctx)
		metrics.StoreStats(gr.Group, gr.Resource, st.ObjectCount, st.AverageSizeBytes, err)
		if err != nil {
			continue // goes stale if it keeps failing
		}
		o.mu.Lock()
		if o.stats == nil {
			o.stats = map[schema.GroupResource]timedStats{}
		}
		o.stats[gr] = timedStats{Stats: st, at: now()}
		o.mu.Unlock()
	}
}

// ObjectStats is the flowcontrol.ObjectCounter of the storages: the
// last count and average size read; ok is false for a resource never
// read (kube's "not found": the list costs the minimum).
func (o *objectCounts) ObjectStats(group, resource string) (count, averageSize int64, ok bool) {
	return o.statsAt(group, resource, time.Now())
}

func (o *objectCounts) statsAt(group, resource string, now time.Time) (count, averageSize int64, ok bool) {
	o.mu.RLock()
	st, ok := o.stats[schema.GroupResource{Group: group, Resource: resource}]
	o.mu.RUnlock()
	if !ok {
		return 0, 0, false
	}
	if now.Sub(st.at) > countStaleAfter {
		return staleObjectCount, staleObjectSize, true
	}
	return st.ObjectCount, st.AverageSizeBytes, true
}

// ObjectStats tells the stored objects of a resource, for API Priority
// and Fairness.
func (f *Factory) ObjectStats(group, resource string) (count, averageSize int64, ok bool) {
	return f.counts.ObjectStats(group, resource)
}

// RunObjectCounts reads every storage's stats now and then every
// CountPollPeriod until ctx is done; a period of 0 reads none, so lists
// cost the minimum, as kube.
func (f *Factory) RunObjectCounts(ctx context.Context) {
	period := f.CountPollPeriod
	if period <= 0 {
		return
	}
	for {
		f.counts.refresh(ctx, time.Now)
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}
