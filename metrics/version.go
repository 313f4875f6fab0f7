package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/version"
)

var (
	buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kubernetes_build_info",
		Help: "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
	}, []string{"major", "minor", "git_version", "git_commit", "git_tree_state", "build_date", "go_version", "compiler", "platform"})
	versionInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "version_info",
		Help: "Provides the compatibility version info of the component. The component label is the name of the component, usually kube, but is relevant for aggregated-apiservers.",
	}, []string{"component", "binary", "emulation", "min_compat"})
)

func init() { register(buildInfo, versionInfo) }

// SetVersion records the version the server reports at /version, and
// the compatibility versions it emulates (kube's 1.37, 1.36).
func SetVersion(v version.Info, emulation, minCompat string) {
	buildInfo.Reset()
	buildInfo.WithLabelValues(v.Major, v.Minor, v.GitVersion, v.GitCommit, v.GitTreeState, v.BuildDate,
		v.GoVersion, v.Compiler, v.Platform).Set(1)
	versionInfo.Reset()
	versionInfo.WithLabelValues("kube", v.Major+"."+v.Minor, emulation, minCompat).Set(1)
}
