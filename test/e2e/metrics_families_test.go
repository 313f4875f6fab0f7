package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// kubeFamiliesFile is kube-apiserver v1.37.2's metric families after
// mixedWorkload, recorded by hack/update-kube-metrics.sh.
const kubeFamiliesFile = "testdata/kube-metric-families.txt"

// notCapstan are kube's families for what capstan does not have, or does
// another way, each with the reason. Every other family kube exposes
// after the workload must be in capstan's /metrics with kube's type and
// label names.
var notCapstan = map[string]string{
	"rest_client_":                                "client-go's own metrics: kube registers its adapter in the process; capstan's loops use client-go without it",
	"workqueue_":                                  "client-go work queue metrics of kube's in-process controllers",
	"informer_":                                   "client-go informer metrics of kube's in-process controllers",
	"grpc_client_":                                "the etcd client's gRPC interceptor metrics",
	"go_":                                         "Go runtime metrics: names differ with the Go release; checked by TestMetricsGoAndProcess",
	"aggregator_":                                 "APIService aggregation is not built (aggregator/ serves root discovery only)",
	"apiserver_kube_aggregator_":                  "APIService aggregation is not built",
	"kube_apiserver_clusterip_allocator_":         "the ClusterIP allocator's metrics are not built",
	"kube_apiserver_nodeport_allocator_":          "the node port allocator's metrics are not built",
	"apiserver_nodeport_repair_":                  "the node port repair loop's metrics are not built",
	"serviceaccount_":                             "service account token metrics are not built",
	"pod_security_":                               "PodSecurity admission's metrics are not built",
	"apiserver_validation_":                       "declarative validation is kube's migration machinery; capstan validates one way",
	"apiserver_cel_":                              "CEL compilation and evaluation metrics are not built",
	"apiextensions_":                              "the CRD OpenAPI and ratcheting metrics are not built",
	"apiserver_envelope_encryption_":              "KMS metrics are not built",
	"apiserver_storage_data_key_":                 "KMS metrics are not built",
	"apiserver_storage_envelope_":                 "KMS metrics are not built",
	"apiserver_client_certificate_":               "client certificate expiry metrics are not built",
	"apiserver_webhooks_x509_":                    "webhook certificate metrics are not built",
	"kubernetes_feature_enabled":                  "feature gate metrics are not built",
	"registered_metrics_total":                    "component-base's count of its own registry",
	"cardinality_enforcement_":                    "component-base's count of its own label allow lists",
	"disabled_metrics_total":                      "component-base's count of its own registry",
	"hidden_metrics_total":                        "component-base's count of its own registry",
	"apiserver_request_timestamp_comparison_time": "capstan compares managed fields' timestamps without timing it",
	"apiserver_request_filter_duration_seconds":   "per-filter latencies are not built",
	"apiserver_admission_controller_admission_duration_seconds": "per-plugin admission durations are not built (the chain does not keep plugin names)",
	"apiserver_flowcontrol_current_r":                           "fair queuing's virtual time is not exported",
	"apiserver_flowcontrol_demand_seats":                        "the demand histogram and utilization samples are not built (the demand gauges are)",
	"apiserver_flowcontrol_priority_level_":                     "the demand histogram and utilization samples are not built (the demand gauges are)",
	"apiserver_flowcontrol_read_vs_write_current_requests":      "the demand histogram and utilization samples are not built (the demand gauges are)",
	"apiserver_flowcontrol_seat_fair_frac":                      "the borrowing allocation's fair fraction and targets are not exported",
	"apiserver_flowcontrol_target_seats":                        "the borrowing allocation's fair fraction and targets are not exported",
	"apiserver_flowcontrol_watch_count_samples":                 "watch counts for write estimates are not exported",
	"apiserver_watch_events_dispatch_duration_seconds":          "per-stage watch dispatch latencies are not built",
	"apiserver_watch_list_duration_seconds":                     "WatchList completion latency is not built",
	"authentication_token_cache_":                               "the token cache's metrics are not built",
}

// skippedFamily tells whether notCapstan names the family: a key that
// ends with "_" is a prefix, any other a whole name.
func skippedFamily(name string) (string, bool) {
	if why, ok := notCapstan[name]; ok {
		return why, true
	}
	for prefix, why := range notCapstan {
		if strings.HasSuffix(prefix, "_") && strings.HasPrefix(name, prefix) {
			return why, true
		}
	}
	return "", false
}

// TestMetricFamiliesMatchKube drives mixedWorkload through capstan and
// compares its /metrics with kube-apiserver's after the same workload.
func TestMetricFamiliesMatchKube(t *testing.T) {
	kube, err := readFamilies(kubeFamiliesFile)
	if err != nil {
		t.Fatal(err)
	}
	e := start(t)
	mixedWorkload(t, e.Config)
	got := scrapeFamilies(t, e.Config)
	for _, name := range sortedKeys(kube) {
		want := kube[name]
		if _, skip := skippedFamily(name); skip {
			continue
		}
		have, ok := got[name]
		switch {
		case !ok:
			t.Errorf("missing family %s", want)
		case have.typ != want.typ || !slices.Equal(have.labels, want.labels):
			t.Errorf("family %s\n  is %s", want, have)
		}
	}
}

// TestRecordKubeMetricFamilies records kubeFamiliesFile from a
// kube-apiserver started by bench/upstream/run.sh: run by
// hack/update-kube-metrics.sh, skipped otherwise.
func TestRecordKubeMetricFamilies(t *testing.T) {
	if os.Getenv(upstreamEnv) == "" || os.Getenv("CAPSTAN_RECORD_KUBE_METRICS") == "" {
		t.Skip("run by hack/update-kube-metrics.sh")
	}
	u := startUpstream(t, "AUTHZ=Node,RBAC")
	cfg, err := clientcmd.BuildConfigFromFlags("", u["KUBECONFIG"])
	if err != nil {
		t.Fatal(err)
	}
	mixedWorkload(t, cfg)
	fams := scrapeFamilies(t, cfg)
	header := "# kube-apiserver v1.37.2's metric families after mixedWorkload: name, type, label names.\n" +
		"# Recorded by hack/update-kube-metrics.sh; read by TestMetricFamiliesMatchKube.\n"
	if err := writeFamilies(filepath.FromSlash(kubeFamiliesFile), header, fams); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d families", len(fams))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
