package metrics

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
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
	"informer_":             "client-go reports only informers created with a process-unique InformerName; capstan's loops do not name theirs (a process may run several servers)",
	"go_":                   "Go runtime metrics: names differ with the Go release; checked by TestMetricsGoAndProcess",
	"apiserver_validation_": "declarative validation is kube's migration machinery; capstan validates one way",
	"apiserver_envelope_encryption_dek_cache_fill_percent": "KMS v1's DEK cache: capstan refuses KMS v1, as kube does without its KMSv1 gate",
	"registered_metrics_total":                             "component-base's count of its own registry",
	"cardinality_enforcement_":                             "component-base's count of its own label allow lists",
	"disabled_metrics_total":                               "component-base's count of its own registry",
	"hidden_metrics_total":                                 "component-base's count of its own registry",
	"apiserver_request_timestamp_comparison_time":          "kube times a comparison that reverts the new managed-fields time of a write that changed nothing; capstan's managed fields keep a manager's time while its fields stay, so there is no comparison to time (TestNoOpWritesKeepResourceVersion)",
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
// compares its /metrics with kube-apiserver's after the same workload,
// authenticated as bench/upstream/run.sh's client is: with a bearer token
// of --token-auth-file (through the token cache).
func TestMetricFamiliesMatchKube(t *testing.T) {
	kube, err := readFamilies(kubeFamiliesFile)
	if err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte(`metrics-token,admin,admin-uid,"system:masters"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := e2eutil.Start(t, "--token-auth-file="+tokens)
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.BearerToken = "metrics-token"
	mixedWorkload(t, cfg)
	got := scrapeFamilies(t, cfg)
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
	if os.Getenv(e2eutil.UpstreamEnv) == "" || os.Getenv("CAPSTAN_RECORD_KUBE_METRICS") == "" {
		t.Skip("run by hack/update-kube-metrics.sh")
	}
	u := e2eutil.StartUpstream(t, "AUTHZ=Node,RBAC")
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
