package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The Service allocator families: kube's ipallocator, portallocator and
// node port repair metrics.
var (
	clusterIPAllocated = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kube_apiserver_clusterip_allocator_allocated_ips",
		Help: "Gauge measuring the number of allocated IPs for Services",
	}, []string{"cidr"})
	clusterIPAvailable = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kube_apiserver_clusterip_allocator_available_ips",
		Help: "Gauge measuring the number of available IPs for Services",
	}, []string{"cidr"})
	clusterIPAllocations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kube_apiserver_clusterip_allocator_allocation_total",
		Help: "Number of Cluster IPs allocations",
	}, []string{"cidr", "scope"})
	clusterIPAllocationErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kube_apiserver_clusterip_allocator_allocation_errors_total",
		Help: "Number of errors trying to allocate Cluster IPs",
	}, []string{"cidr", "scope"})
	clusterIPAllocationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kube_apiserver_clusterip_allocator_allocation_duration_seconds",
		Help:    "Duration in seconds to allocate a Cluster IP by ServiceCIDR",
		Buckets: prometheus.DefBuckets,
	}, []string{"cidr"})
	nodePortAllocated = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kube_apiserver_nodeport_allocator_allocated_ports",
		Help: "Gauge measuring the number of allocated NodePorts for Services",
	})
	nodePortAvailable = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "kube_apiserver_nodeport_allocator_available_ports",
		Help: "Gauge measuring the number of available NodePorts for Services",
	})
	nodePortAllocations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kube_apiserver_nodeport_allocator_allocation_total",
		Help: "Number of NodePort allocations",
	}, []string{"scope"})
	nodePortAllocationErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kube_apiserver_nodeport_allocator_allocation_errors_total",
		Help: "Number of errors trying to allocate NodePort",
	}, []string{"scope"})
	nodePortRepairPortErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_nodeport_repair_port_errors_total",
		Help: "Number of errors detected on ports by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown",
	}, []string{"type"})
	nodePortRepairReconcileErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "apiserver_nodeport_repair_reconcile_errors_total",
		Help: "Number of reconciliation failures on the nodeport repair reconcile loop",
	})
)

func init() {
	register(clusterIPAllocated, clusterIPAvailable, clusterIPAllocations, clusterIPAllocationErrors,
		clusterIPAllocationDuration, nodePortAllocated, nodePortAvailable, nodePortAllocations,
		nodePortAllocationErrors, nodePortRepairPortErrors, nodePortRepairReconcileErrors)
}

// ClusterIPAllocation records an allocation in the CIDR, "static" (an
// address asked for) or "dynamic", begun at start; err is its failure.
func ClusterIPAllocation(cidr, scope string, start time.Time, err error) {
	if err != nil {
		clusterIPAllocationErrors.WithLabelValues(cidr, scope).Inc()
		return
	}
	clusterIPAllocations.WithLabelValues(cidr, scope).Inc()
	clusterIPAllocationDuration.WithLabelValues(cidr).Observe(time.Since(start).Seconds())
}

// ClusterIPUsage sets the allocated and available addresses of the CIDR.
func ClusterIPUsage(cidr string, allocated, available float64) {
	clusterIPAllocated.WithLabelValues(cidr).Set(allocated)
	clusterIPAvailable.WithLabelValues(cidr).Set(available)
}

// NodePortAllocation records a node port allocation, "static" or
// "dynamic"; err is its failure.
func NodePortAllocation(scope string, err error) {
	if err != nil {
		nodePortAllocationErrors.WithLabelValues(scope).Inc()
		return
	}
	nodePortAllocations.WithLabelValues(scope).Inc()
}

// NodePortUsage sets the allocated and available node ports.
func NodePortUsage(allocated, available int) {
	nodePortAllocated.Set(float64(allocated))
	nodePortAvailable.Set(float64(available))
}

// NodePortRepairError counts a port the repair loop found wrong, by kind:
// "leak", "repair", "full", "outOfRange", "duplicate" or "unknown".
func NodePortRepairError(kind string) { nodePortRepairPortErrors.WithLabelValues(kind).Inc() }

// NodePortReconcileError counts a failed run of the node port repair loop.
func NodePortReconcileError() { nodePortRepairReconcileErrors.Inc() }
