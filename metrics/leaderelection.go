package metrics

import "github.com/prometheus/client_golang/prometheus"

// leaderStatus is client-go's leader election gauge as kube's components
// register it: 1 while this process leads the lease named name.
var leaderStatus = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "leader_election_master_status",
	Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
}, []string{"name"})

func init() { register(leaderStatus) }

// LeaderElection records whether this process leads the lease name.
func LeaderElection(name string, leading bool) {
	v := 0.0
	if leading {
		v = 1
	}
	leaderStatus.WithLabelValues(name).Set(v)
}
