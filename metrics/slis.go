package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// slis is /metrics/slis' registry: the health checks' results, as
// kube's component-base/metrics/prometheus/slis.
var (
	slis        = prometheus.NewRegistry()
	healthcheck = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kubernetes_healthcheck",
		Help: "This metric records the result of a single healthcheck.",
	}, []string{"name", "type"})
	healthchecksTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubernetes_healthchecks_total",
		Help: "This metric records the results of all healthcheck.",
	}, []string{"name", "type", "status"})
)

func init() {
	slis.MustRegister(healthcheck, healthchecksTotal,
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// HealthCheck records one run of the check name of kind (healthz, livez
// or readyz).
func HealthCheck(kind, name string, ok bool) {
	status, value := "error", 0.0
	if ok {
		status, value = "success", 1.0
	}
	healthcheck.WithLabelValues(name, kind).Set(value)
	healthchecksTotal.WithLabelValues(name, kind, status).Inc()
}

// SLIHandler serves /metrics/slis.
func SLIHandler() http.Handler {
	return promhttp.HandlerFor(slis, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
