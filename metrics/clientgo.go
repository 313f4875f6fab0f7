package metrics

import (
	"context"
	"math"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
	"k8s.io/client-go/util/workqueue"
)

// The client-go families: the work queues of capstan's control loops and
// the REST clients they write through (the loopback client), named as
// component-base's adapters name them in kube-apiserver.
var (
	workqueueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "workqueue_depth", Help: "Current depth of workqueue",
	}, []string{"name"})
	workqueueAdds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "workqueue_adds_total", Help: "Total number of adds handled by workqueue",
	}, []string{"name"})
	workqueueLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "workqueue_queue_duration_seconds",
		Help:    "How long in seconds an item stays in workqueue before being requested.",
		Buckets: exponential(10e-9, 10, 10),
	}, []string{"name"})
	workqueueWorkDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "workqueue_work_duration_seconds",
		Help:    "How long in seconds processing an item from workqueue takes.",
		Buckets: exponential(10e-9, 10, 10),
	}, []string{"name"})
	workqueueUnfinished = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "workqueue_unfinished_work_seconds",
		Help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
	}, []string{"name"})
	workqueueLongest = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "workqueue_longest_running_processor_seconds",
		Help: "How many seconds has the longest running processor for workqueue been running.",
	}, []string{"name"})
	workqueueRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "workqueue_retries_total", Help: "Total number of retries handled by workqueue",
	}, []string{"name"})

	sizeBuckets       = []float64{64, 256, 512, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216}
	restLatencyBucket = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0}
	restLatency       = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rest_client_request_duration_seconds", Help: "Request latency in seconds. Broken down by verb, and host.",
		Buckets: restLatencyBucket,
	}, []string{"verb", "host"})
	restRateLimiterLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rest_client_rate_limiter_duration_seconds", Help: "Client side rate limiter latency in seconds. Broken down by verb, and host.",
		Buckets: restLatencyBucket,
	}, []string{"verb", "host"})
	restRequestSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rest_client_request_size_bytes", Help: "Request size in bytes. Broken down by verb and host.", Buckets: sizeBuckets,
	}, []string{"verb", "host"})
	restResponseSize = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rest_client_response_size_bytes", Help: "Response size in bytes. Broken down by verb and host.", Buckets: sizeBuckets,
	}, []string{"verb", "host"})
	restRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total", Help: "Number of HTTP requests, partitioned by status code, method, and host.",
	}, []string{"code", "method", "host"})
	restRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_request_retries_total", Help: "Number of request retries, partitioned by status code, verb, and host.",
	}, []string{"code", "verb", "host"})
	restExecPluginExpiry atomic.Pointer[time.Time]
	restExecPluginTTL    = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rest_client_exec_plugin_ttl_seconds",
		Help: "Gauge of the shortest TTL (time-to-live) of the client certificate(s) managed by the auth exec plugin. The value is in seconds until certificate expiry (negative if already expired). If auth exec plugins are unused or manage no TLS certificates, the value will be +INF.",
	}, func() float64 {
		if e := restExecPluginExpiry.Load(); e != nil {
			return time.Until(*e).Seconds()
		}
		return math.Inf(1)
	})
	restExecPluginRotation = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "rest_client_exec_plugin_certificate_rotation_age",
		Help:    "Histogram of the number of seconds the last auth exec plugin client certificate lived before being rotated. If auth exec plugin client certificates are unused, histogram will contain no data.",
		Buckets: []float64{600, 1800, 3600, 14400, 86400, 604800, 2592000, 7776000, 15552000, 31104000, 124416000},
	})
	restTransportCacheEntries = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rest_client_transport_cache_entries", Help: "Number of transport entries in the internal cache.",
	})
	restTransportCreateCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_transport_create_calls_total",
		Help: "Number of calls to get a new transport, partitioned by the result of the operation hit: obtained from the cache, miss: created and added to the cache, uncacheable: created and not cached",
	}, []string{"result"})
	restTransportCertRotationGC = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rest_client_transport_cert_rotation_gc_calls_total",
		Help: "Number of times a cert rotation goroutine cancel func is called via GC cleanup of the associated transport",
	})
)

var clientGoOnce sync.Once

// RecordClientGo makes client-go's work queues and REST clients record
// into these families. client-go keeps one provider per process, set
// once (a later call of its setters does nothing), as capstan keeps one
// registry per process: the servers of a process share the series.
func RecordClientGo() {
	clientGoOnce.Do(func() {
		register(workqueueDepth, workqueueAdds, workqueueLatency, workqueueWorkDuration,
			workqueueUnfinished, workqueueLongest, workqueueRetries,
			restLatency, restRateLimiterLatency, restRequestSize, restResponseSize, restRequests,
			restRetries, restExecPluginTTL, restExecPluginRotation, restTransportCacheEntries,
			restTransportCreateCalls, restTransportCertRotationGC)
		workqueue.SetProvider(queueProvider{})
		clientmetrics.Register(clientmetrics.RegisterOpts{
			ClientCertExpiry:             expiryFunc(func(e *time.Time) { restExecPluginExpiry.Store(e) }),
			ClientCertRotationAge:        durationFunc(func(d time.Duration) { restExecPluginRotation.Observe(d.Seconds()) }),
			RequestLatency:               latencyVec{restLatency},
			RateLimiterLatency:           latencyVec{restRateLimiterLatency},
			RequestSize:                  sizeVec{restRequestSize},
			ResponseSize:                 sizeVec{restResponseSize},
			RequestResult:                resultVec{restRequests},
			RequestRetry:                 retryVec{restRetries},
			TransportCacheEntries:        cacheEntriesFunc(func(n int) { restTransportCacheEntries.Set(float64(n)) }),
			TransportCreateCalls:         createCallsFunc(func(r string) { restTransportCreateCalls.WithLabelValues(r).Inc() }),
			TransportCertRotationGCCalls: gcCallsFunc(restTransportCertRotationGC.Inc),
		})
	})
}

// queueProvider is client-go's workqueue.MetricsProvider over the
// workqueue_ families.
type queueProvider struct{}

func (queueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return workqueueDepth.WithLabelValues(name)
}
func (queueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return workqueueAdds.WithLabelValues(name)
}
func (queueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return workqueueLatency.WithLabelValues(name)
}
func (queueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return workqueueWorkDuration.WithLabelValues(name)
}
func (queueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return workqueueUnfinished.WithLabelValues(name)
}
func (queueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return workqueueLongest.WithLabelValues(name)
}
func (queueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return workqueueRetries.WithLabelValues(name)
}

// The adapters of client-go's tools/metrics interfaces.
type (
	expiryFunc       func(*time.Time)
	durationFunc     func(time.Duration)
	cacheEntriesFunc func(int)
	createCallsFunc  func(string)
	gcCallsFunc      func()
	latencyVec       struct{ *prometheus.HistogramVec }
	sizeVec          struct{ *prometheus.HistogramVec }
	resultVec        struct{ *prometheus.CounterVec }
	retryVec         struct{ *prometheus.CounterVec }
)

func (f expiryFunc) Set(e *time.Time)             { f(e) }
func (f durationFunc) Observe(d time.Duration)    { f(d) }
func (f cacheEntriesFunc) Observe(n int)          { f(n) }
func (f createCallsFunc) Increment(result string) { f(result) }
func (f gcCallsFunc) Increment()                  { f() }

func (l latencyVec) Observe(_ context.Context, verb string, u url.URL, d time.Duration) {
	l.WithLabelValues(verb, u.Host).Observe(d.Seconds())
}
func (s sizeVec) Observe(_ context.Context, verb, host string, size float64) {
	s.WithLabelValues(verb, host).Observe(size)
}
func (r resultVec) Increment(_ context.Context, code, method, host string) {
	r.WithLabelValues(code, method, host).Inc()
}
func (r retryVec) IncrementRetry(_ context.Context, code, method, host string) {
	r.WithLabelValues(code, method, host).Inc()
}
