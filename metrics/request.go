package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// The request families: kube's endpoints/metrics, same names, help,
// labels and buckets.
var (
	requestTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_total",
		Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
	}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "apiserver_request_duration_seconds",
		Help: "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
		Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
			4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
	}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"})
	requestSLIDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "apiserver_request_sli_duration_seconds",
		Help: "Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.",
		Buckets: []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
			4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"})
	responseSizes = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_response_sizes",
		Help:    "Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.",
		Buckets: exponential(1000, 10.0, 7),
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"})
	longRunningRequests = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_longrunning_requests",
		Help: "Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.",
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component"})
	terminations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_terminations_total",
		Help: "Number of requests which apiserver terminated in self-defense.",
	}, []string{"verb", "group", "version", "resource", "subresource", "scope", "component", "code"})
	selfRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_selfrequest_total",
		Help: "Counter of apiserver self-requests broken out for each verb, API resource and subresource.",
	}, []string{"verb", "group", "resource", "subresource"})
	fieldValidationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "field_validation_request_duration_seconds",
		Help: "Response latency distribution in seconds for each field validation value",
		Buckets: []float64{0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
			4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
	}, []string{"field_validation"})
	requestBodySizes = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_body_size_bytes",
		Help:    "Apiserver request body size in bytes broken out by resource and verb.",
		Buckets: prometheus.LinearBuckets(50000, 100000, 31),
	}, []string{"group", "resource", "verb"})
	watchEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_events_total",
		Help: "Number of events sent in watch clients",
	}, []string{"group", "version", "resource"})
	watchEventSizes = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_events_sizes",
		Help:    "Watch event size distribution in bytes",
		Buckets: exponential(1024, 2.0, 8),
	}, []string{"group", "version", "resource"})
	tlsHandshakeErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "apiserver_tls_handshake_errors_total",
		Help: "Number of requests dropped with 'TLS handshake error from' error",
	})
)

func init() {
	register(requestTotal, requestDuration, requestSLIDuration, responseSizes, longRunningRequests,
		terminations, selfRequests, fieldValidationDuration, requestBodySizes, watchEvents,
		watchEventSizes, tlsHandshakeErrors)
}

// codes holds the status codes' label values, so that recording a
// request formats none.
var codes = func() (c [600]string) {
	for i := range c {
		c[i] = strconv.Itoa(i)
	}
	return c
}()

func codeLabel(code int) string {
	if code >= 0 && code < len(codes) {
		return codes[code]
	}
	return strconv.Itoa(code)
}

// TLSHandshakeError counts a connection whose TLS handshake failed.
func TLSHandshakeError() { tlsHandshakeErrors.Inc() }

// WatchRecorder counts the events one watch sends.
type WatchRecorder struct {
	events prometheus.Counter
	sizes  prometheus.Observer
}

// Watch returns the recorder of a watch of a resource: its series are
// looked up once, not per event.
func Watch(group, version, resource string) WatchRecorder {
	return WatchRecorder{
		events: watchEvents.WithLabelValues(group, version, resource),
		sizes:  watchEventSizes.WithLabelValues(group, version, resource),
	}
}

// Sent records an event of size bytes.
func (w WatchRecorder) Sent(size int64) {
	w.events.Inc()
	w.sizes.Observe(float64(size))
}

// RequestBody records the size of a request body a handler read, with
// kube's verbs (create, update, patch, delete, delete_collection).
func RequestBody(group, resource, verb string, size int) {
	if verb == "deletecollection" {
		verb = "delete_collection"
	}
	requestBodySizes.WithLabelValues(group, resource, verb).Observe(float64(size))
}
