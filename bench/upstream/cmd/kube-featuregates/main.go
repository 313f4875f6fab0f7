// Command kube-featuregates prints the feature gates of kube-apiserver
// v1.37.2 as they stand at its binary version, one per line:
// name, default, locked, stage. hack/update-kube-flags.sh records its output
// for capstan's --feature-gates.
package main

import (
	"fmt"
	"os"
	"sort"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	_ "k8s.io/kubernetes/pkg/features" // registers kube's gates
)

func main() {
	all := utilfeature.DefaultMutableFeatureGate.GetAll()
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, string(name))
	}
	sort.Strings(names)
	for _, name := range names {
		spec := all[featuregate.Feature(name)]
		stage := string(spec.PreRelease)
		if stage == "" {
			stage = "GA"
		}
		if _, err := fmt.Fprintf(os.Stdout, "%s\t%t\t%t\t%s\n", name, spec.Default, spec.LockToDefault, stage); err != nil {
			os.Exit(1)
		}
	}
}
