package metrics

import "github.com/prometheus/client_golang/prometheus"

// kube-aggregator's availability families: each APIService's last
// availability check (1: unavailable), and how often each became
// unavailable, by the reason of its Available condition.
var (
	unavailableAPIService = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "aggregator_unavailable_apiservice",
		Help: "Gauge of APIServices which are marked as unavailable broken down by APIService name.",
	}, []string{"name"})
	unavailableAPIServiceTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "aggregator_unavailable_apiservice_total",
		Help: "Counter of APIServices which are marked as unavailable broken down by APIService name and reason.",
	}, []string{"name", "reason"})
)

func init() { register(unavailableAPIService, unavailableAPIServiceTotal) }

// APIServiceAvailability records an availability check of the APIService
// name: available now or not, and, when it was available before and is
// not now, one more of reason.
func APIServiceAvailability(name string, wasAvailable, available bool, reason string) {
	v := 1.0
	if available {
		v = 0
	}
	unavailableAPIService.WithLabelValues(name).Set(v)
	if wasAvailable && !available {
		if reason == "" {
			reason = "UnknownReason"
		}
		unavailableAPIServiceTotal.WithLabelValues(name, reason).Inc()
	}
}

// ForgetAPIService drops the gauge of a deleted APIService.
func ForgetAPIService(name string) { unavailableAPIService.DeleteLabelValues(name) }

// discoveryAggregations counts the rebuilds of the merged discovery
// documents: one per change of the groups the chain and its extension
// servers serve.
var discoveryAggregations = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "aggregator_discovery_aggregation_count_total",
	Help: "Number of times the discovery documents were rebuilt from every group served.",
})

func init() { register(discoveryAggregations) }

// DiscoveryAggregated records one rebuild of the discovery documents.
func DiscoveryAggregated() { discoveryAggregations.Inc() }
