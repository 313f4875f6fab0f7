package metrics

import "github.com/prometheus/client_golang/prometheus"

// featureEnabled is component-base's family of feature gates: one series
// per gate kube-apiserver knows, 1 when on, labelled with its stage.
var featureEnabled = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "kubernetes_feature_enabled",
	Help: "Whether each feature gate is enabled (1) or not (0), by name and stage.",
}, []string{"name", "stage"})

func init() { register(featureEnabled) }

// FeatureGate records the gate name's stage ("ALPHA", "BETA",
// "DEPRECATED", or "" once GA, as kube labels it) and value.
func FeatureGate(name, stage string, enabled bool) {
	v := 0.0
	if enabled {
		v = 1
	}
	featureEnabled.WithLabelValues(name, stage).Set(v)
}
