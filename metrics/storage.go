package metrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The storage families: kube's storage/etcd3/metrics and storage/metrics.
var (
	etcdRequestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "etcd_request_duration_seconds",
		Help: "Etcd request latency in seconds for each operation and object type.",
		Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
			4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
	}, []string{"operation", "group", "resource"})
	etcdRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_requests_total",
		Help: "Etcd request counts for each operation and object type.",
	}, []string{"operation", "group", "resource"})
	etcdRequestErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_request_errors_total",
		Help: "Etcd failed request counts for each operation and object type.",
	}, []string{"operation", "group", "resource"})
	resourceObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_resource_objects",
		Help: "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
	}, []string{"group", "resource"})
	resourceSizeEstimate = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_resource_size_estimate_bytes",
		Help: "Estimated size of stored objects in database. Estimate is based on sum of last observed sizes of serialized objects. In case of a fetching error, the value will be -1.",
	}, []string{"group", "resource"})
	storageEventsReceived = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_storage_events_received_total",
		Help: "Number of etcd events received split by kind.",
	}, []string{"group", "resource"})
	etcdBookmarks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "etcd_bookmark_total",
		Help: "Number of etcd bookmarks (progress notify events) split by kind.",
	}, []string{"group", "resource"})
	// etcdBookmarkCounts is kube's gauge deprecated in 1.36, so hidden in
	// 1.37 unless --show-hidden-metrics-for-version=1.36.
	etcdBookmarkCounts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "etcd_bookmark_counts",
		Help: "(Deprecated since 1.36.0) Number of etcd bookmarks (progress notify events) split by kind.",
	}, []string{"group", "resource"})
	etcdLeaseObjects = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "etcd_lease_object_counts",
		Help:    "Number of objects attached to a single etcd lease.",
		Buckets: []float64{10, 50, 100, 500, 1000, 2500, 5000},
	})
	storageDecodeErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_storage_decode_errors_total",
		Help: "Number of stored object decode errors split by object type",
	}, []string{"group", "resource"})
	storageListTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_storage_list_total",
		Help: "Number of LIST requests served from storage",
	}, []string{"group", "resource", "storage", "index"})
	storageListFetched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_storage_list_fetched_objects_total",
		Help: "Number of objects read from storage in the course of serving a LIST request",
	}, []string{"group", "resource", "storage", "index"})
	storageListEvaluated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_storage_list_evaluated_objects_total",
		Help: "Number of objects tested in the course of serving a LIST request from storage",
	}, []string{"group", "resource", "storage"})
	storageListReturned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_storage_list_returned_objects_total",
		Help: "Number of objects returned for a LIST request from storage",
	}, []string{"group", "resource", "storage"})
)

func init() {
	register(etcdRequestDuration, etcdRequests, etcdRequestErrors, resourceObjects,
		resourceSizeEstimate, storageEventsReceived, etcdBookmarks, etcdBookmarkCounts,
		etcdLeaseObjects, storageDecodeErrors, storageListTotal, storageListFetched,
		storageListEvaluated, storageListReturned)
}

// EtcdRequest records one etcd call of a resource's store, started at
// start, with kube's operation names (create, get, listWithCount,
// listStream, update, delete, getCurrentResourceVersion, ...).
func EtcdRequest(operation, group, resource string, start time.Time, err error) {
	etcdRequestDuration.WithLabelValues(operation, group, resource).Observe(time.Since(start).Seconds())
	etcdRequests.WithLabelValues(operation, group, resource).Inc()
	if err != nil {
		etcdRequestErrors.WithLabelValues(operation, group, resource).Inc()
	}
}

// StoreStats records a resource's object count and the estimate of their
// size; err (a count that failed) is reported as -1, as kube does.
func StoreStats(group, resource string, count, averageSize int64, err error) {
	if err != nil {
		resourceObjects.WithLabelValues(group, resource).Set(-1)
		resourceSizeEstimate.WithLabelValues(group, resource).Set(-1)
		return
	}
	resourceObjects.WithLabelValues(group, resource).Set(float64(count))
	resourceSizeEstimate.WithLabelValues(group, resource).Set(float64(count * averageSize))
}

// StorageEvent counts an event an etcd watch delivered.
func StorageEvent(group, resource string) {
	storageEventsReceived.WithLabelValues(group, resource).Inc()
}

// EtcdBookmark counts a progress notification of an etcd watch.
func EtcdBookmark(group, resource string) {
	etcdBookmarks.WithLabelValues(group, resource).Inc()
	etcdBookmarkCounts.WithLabelValues(group, resource).Inc()
}

// LeaseObjects records how many objects one etcd lease carries.
func LeaseObjects(n int64) { etcdLeaseObjects.Observe(float64(n)) }

// DecodeError counts a stored value that did not decode.
func DecodeError(group, resource string) {
	storageDecodeErrors.WithLabelValues(group, resource).Inc()
}

// StorageList records a list served by storage ("etcd3" or
// "watchcache"): the objects fetched, evaluated by the predicate and
// returned; index names the index used, or "".
func StorageList(group, resource, storage, index string, fetched, evaluated, returned int) {
	storageListTotal.WithLabelValues(group, resource, storage, index).Inc()
	storageListFetched.WithLabelValues(group, resource, storage, index).Add(float64(fetched))
	storageListEvaluated.WithLabelValues(group, resource, storage).Add(float64(evaluated))
	storageListReturned.WithLabelValues(group, resource, storage).Add(float64(returned))
}

// storageSize is apiserver_storage_size_bytes: asked of etcd when
// scraped, as kube's storage monitor does.
type storageSize struct {
	desc *prometheus.Desc
	fn   atomic.Pointer[func(context.Context) (int64, error)]
}

var storageSizes = &storageSize{desc: prometheus.NewDesc("apiserver_storage_size_bytes",
	"Size of the storage database file physically allocated in bytes.", []string{"storage_cluster_id"}, nil)}

func init() { register(storageSizes) }

// SetStorageSize makes fn the source of apiserver_storage_size_bytes: the
// database size of the etcd the server stores in.
func SetStorageSize(fn func(context.Context) (int64, error)) { storageSizes.fn.Store(&fn) }

func (s *storageSize) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

func (s *storageSize) Collect(ch chan<- prometheus.Metric) {
	fn := s.fn.Load()
	if fn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	size, err := (*fn)(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, float64(size), "etcd-0")
}
