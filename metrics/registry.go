// Package metrics holds capstan's Prometheus families, named, typed,
// labelled and bucketed as kube-apiserver's, the calls that record them
// (one line at each place where something happens), and the /metrics
// handler with kube's --disabled-metrics, --allow-metric-labels and
// --show-hidden-metrics-for-version.
//
// The families live in one process-wide registry, as kube's legacy
// registry: dashboards read one series per process, and the recording
// calls stay one-liners that need nothing passed down. Label values that
// come from requests are bounded where they are recorded (unknown verbs
// become "other"; a resource is a label only once a handler served it);
// user agents and paths never are labels.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// registry holds every family capstan exposes.
var registry = prometheus.NewRegistry()

// register adds collectors to the registry; a family is defined once, at
// package initialisation, so a clash is a programming error.
func register(cs ...prometheus.Collector) {
	registry.MustRegister(cs...)
}

func init() {
	register(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsAll)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
}

// Gatherer is the registry, for tests and the /metrics handler.
func Gatherer() prometheus.Gatherer { return registry }

// exponential is prometheus.ExponentialBuckets, named as kube's
// definitions use it.
func exponential(start, factor float64, count int) []float64 {
	return prometheus.ExponentialBuckets(start, factor, count)
}
