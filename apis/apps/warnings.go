package apps

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
)

// podNameWarnings warns when the name of a workload whose pods take their
// names from it is not a DNS label, as kube does for deployments and replica
// sets.
func podNameWarnings(name string) []string {
	msgs := validation.IsDNS1123Label(name)
	if len(msgs) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
}
