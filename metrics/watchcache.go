package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The watch cache families: kube's storage/cacher/metrics.
var (
	cacheEventsReceived = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_events_received_total",
		Help: "Counter of events received in watch cache broken by resource type.",
	}, []string{"group", "resource"})
	cacheEventsDispatched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_events_dispatched_total",
		Help: "Counter of events dispatched in watch cache broken by resource type.",
	}, []string{"group", "resource"})
	cacheInitEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_init_events_total",
		Help: "Counter of init events processed in watch cache broken by resource type.",
	}, []string{"group", "resource"})
	cacheTerminatedWatchers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_terminated_watchers_total",
		Help: "Counter of watchers closed due to unresponsiveness broken by resource type.",
	}, []string{"group", "resource"})
	cacheResourceVersion = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_watch_cache_resource_version",
		Help: "Current resource version of watch cache broken by resource type. This is truncated to the 15 least significant digits.",
	}, []string{"group", "resource"})
	cacheCapacity = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "watch_cache_capacity",
		Help: "Total capacity of watch cache broken by resource type.",
	}, []string{"group", "resource"})
	cacheInitializations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_initializations_total",
		Help: "Counter of watch cache initializations broken by resource type.",
	}, []string{"group", "resource"})
	cacheInitializationErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_initialization_errors_total",
		Help: "Counter of watch cache initialization errors broken by resource type.",
	}, []string{"group", "resource"})
	cacheInitializationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_cache_initialization_duration_seconds",
		Help:    "Histogram of watch cache initialization duration in seconds, broken by resource type.",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180, 600},
	}, []string{"group", "resource"})
	cacheReadWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_cache_read_wait_seconds",
		Help:    "Histogram of time spent waiting for a watch cache to become fresh.",
		Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3},
	}, []string{"group", "resource"})
	cacheConsistentReads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_cache_consistent_read_total",
		Help: "Counter for consistent reads from cache.",
	}, []string{"group", "resource", "success", "fallback"})
	watchDispatchStages = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_events_dispatch_duration_seconds",
		Help:    "Histogram of watch event dispatch latency broken by resource type and pipeline stage. The 'total' stage is the end-to-end latency of a delivered event.",
		Buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"group", "resource", "stage"})
)

func init() {
	register(cacheEventsReceived, cacheEventsDispatched, cacheInitEvents, cacheTerminatedWatchers,
		cacheResourceVersion, cacheCapacity, cacheInitializations, cacheInitializationErrors,
		cacheInitializationDuration, cacheReadWait, cacheConsistentReads, watchDispatchStages)
}

// WatchCache records what one resource's watch cache does; its series
// are looked up once, when the cache is made.
type WatchCache struct {
	group, resource string
	received        prometheus.Counter
	dispatched      prometheus.Counter
	initEvents      prometheus.Counter
	resourceVersion prometheus.Gauge
	// The dispatch stages of kube's watch cache.
	storageToCache, cacheToWatcher, total prometheus.Observer
}

// NewWatchCache returns the recorder of a resource's cache of capacity
// events of history.
func NewWatchCache(group, resource string, capacity int) *WatchCache {
	cacheCapacity.WithLabelValues(group, resource).Set(float64(capacity))
	return &WatchCache{
		group: group, resource: resource,
		received:        cacheEventsReceived.WithLabelValues(group, resource),
		dispatched:      cacheEventsDispatched.WithLabelValues(group, resource),
		initEvents:      cacheInitEvents.WithLabelValues(group, resource),
		resourceVersion: cacheResourceVersion.WithLabelValues(group, resource),
		storageToCache:  watchDispatchStages.WithLabelValues(group, resource, "storage_to_cache"),
		cacheToWatcher:  watchDispatchStages.WithLabelValues(group, resource, "cache_to_watcher"),
		total:           watchDispatchStages.WithLabelValues(group, resource, "total"),
	}
}

// Delivered records the way of a change to one watcher: decoded from
// storage, received by the cache, made into the watcher's event (built)
// and put in its result channel (sent).
func (w *WatchCache) Delivered(decoded, received, built, sent time.Time) {
	w.storageToCache.Observe(received.Sub(decoded).Seconds())
	w.cacheToWatcher.Observe(sent.Sub(built).Seconds())
	w.total.Observe(sent.Sub(decoded).Seconds())
}

// Received counts an event the cache applied; Dispatched one it gave to
// its watchers.
func (w *WatchCache) Received()   { w.received.Inc() }
func (w *WatchCache) Dispatched() { w.dispatched.Inc() }

// InitEvents counts the initial events a new watch was sent.
func (w *WatchCache) InitEvents(n int) { w.initEvents.Add(float64(n)) }

// ResourceVersion records the cache's revision, cut to 15 digits as
// kube cuts it (a float holds no more exactly).
func (w *WatchCache) ResourceVersion(rv uint64) {
	w.resourceVersion.Set(float64(rv % 1_000_000_000_000_000))
}

// Initialized records a fill of the cache from a list that began at
// start; err is a failed one.
func (w *WatchCache) Initialized(start time.Time, err error) {
	if err != nil {
		cacheInitializationErrors.WithLabelValues(w.group, w.resource).Inc()
		return
	}
	cacheInitializations.WithLabelValues(w.group, w.resource).Inc()
	cacheInitializationDuration.WithLabelValues(w.group, w.resource).Observe(time.Since(start).Seconds())
}

// TerminatedWatchers counts watchers closed for not keeping up.
func (w *WatchCache) TerminatedWatchers(n int) {
	cacheTerminatedWatchers.WithLabelValues(w.group, w.resource).Add(float64(n))
}

// ConsistentRead records a consistent read that waited since start for
// the cache to be fresh: served from the cache (ok), or sent to storage
// (fallback), or failed.
func (w *WatchCache) ConsistentRead(start time.Time, ok bool, err error) {
	cacheReadWait.WithLabelValues(w.group, w.resource).Observe(time.Since(start).Seconds())
	cacheConsistentReads.WithLabelValues(w.group, w.resource,
		strconv.FormatBool(err == nil && ok), strconv.FormatBool(err == nil && !ok)).Inc()
}

// List records a list the cache served: objects read, tested and returned.
func (w *WatchCache) List(fetched, evaluated, returned int) {
	StorageList(w.group, w.resource, "watchcache", "", fetched, evaluated, returned)
}
