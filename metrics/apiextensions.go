package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The CRD families: kube's cel metrics (CEL rules of CRD schemas),
// apiextensions' validation metrics and its OpenAPI controllers' counts.
var (
	celCompilation = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "apiserver_cel_compilation_duration_seconds",
		Help: "CEL compilation time in seconds.",
	})
	celEvaluation = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "apiserver_cel_evaluation_duration_seconds",
		Help: "CEL evaluation time in seconds.",
	})
	crdRatcheting = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "apiextensions_apiserver_validation_ratcheting_seconds",
		Help:    "Time for comparison of old to new for the purposes of CRDValidationRatcheting during an UPDATE in seconds.",
		Buckets: exponential(0.00001, 4, 10),
	})
	openAPIv2Regeneration = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiextensions_openapi_v2_regeneration_count",
		Help: "Counter of OpenAPI v2 spec regeneration count broken down by causing CRD name and reason.",
	}, []string{"crd", "reason"})
	openAPIv3Regeneration = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiextensions_openapi_v3_regeneration_count",
		Help: "Counter of OpenAPI v3 spec regeneration count broken down by group, version, causing CRD and reason.",
	}, []string{"group", "version", "crd", "reason"})
)

func init() {
	register(celCompilation, celEvaluation, crdRatcheting, openAPIv2Regeneration, openAPIv3Regeneration)
}

// CELCompilation records the compilation of one schema node's CRD
// validation rules, begun at start.
func CELCompilation(start time.Time) { celCompilation.Observe(time.Since(start).Seconds()) }

// CELEvaluation records the evaluation of a custom resource's CRD
// validation rules, begun at start.
func CELEvaluation(start time.Time) { celEvaluation.Observe(time.Since(start).Seconds()) }

// CRDRatcheting records the time a custom resource's update spent
// validating with ratcheting (old values matched with new ones).
func CRDRatcheting(d time.Duration) { crdRatcheting.Observe(d.Seconds()) }

// CRDOpenAPI records that the OpenAPI documents of the CRD name changed
// for reason ("add", "update" or "remove"), in /openapi/v2 and in the
// /openapi/v3 document of each of its group versions. kube creates these
// series and never increments them; so does this, for the dashboards
// that count the series.
func CRDOpenAPI(name, reason, group string, versions []string) {
	openAPIv2Regeneration.WithLabelValues(name, reason)
	for _, v := range versions {
		openAPIv3Regeneration.WithLabelValues(group, v, name, reason)
	}
}
