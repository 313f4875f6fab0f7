package storage

import (
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// deprecatedNodeLabels are the node labels kube warns of in topologies, with
// its messages.
var deprecatedNodeLabels = map[string]string{
	`beta.kubernetes.io/arch`:                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	`beta.kubernetes.io/os`:                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	`failure-domain.beta.kubernetes.io/region`:      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	`failure-domain.beta.kubernetes.io/zone`:        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	`beta.kubernetes.io/instance-type`:              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	`app.kubernetes.io/created-by`:                  `deprecated since v1.9`,
	`scheduler.alpha.kubernetes.io/preferAvoidPods`: `deprecated since v1.22; use Taints and Tolerations instead`,
	`node-role.kubernetes.io/master`:                `use "node-role.kubernetes.io/control-plane" instead`,
}

func storageClassWarnings(sc *storagev1.StorageClass) []string {
	var warnings []string
	for i, term := range sc.AllowedTopologies {
		for j, e := range term.MatchLabelExpressions {
			if msg, ok := deprecatedNodeLabels[e.Key]; ok {
				p := field.NewPath("allowedTopologies").Index(i).Child("matchLabelExpressions").Index(j).Child("key")
				warnings = append(warnings, fmt.Sprintf("%s: %s", p, msg))
			}
		}
	}
	return warnings
}

// selectorWarnings warns about deprecated node labels in a node selector.
func selectorWarnings(sel *metav1.LabelSelector, fldPath *field.Path) []string {
	if sel == nil {
		return nil
	}
	var warnings []string
	for i, e := range sel.MatchExpressions {
		if msg, ok := deprecatedNodeLabels[e.Key]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s is %s", fldPath.Child("matchExpressions").Index(i).Child("key"), e.Key, msg))
		}
	}
	for key := range sel.MatchLabels {
		if msg, ok := deprecatedNodeLabels[key]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s", fldPath.Child("matchLabels").Child(key), msg))
		}
	}
	return warnings
}
