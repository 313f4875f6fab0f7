package e2eutil

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var DryRun = []string{metav1.DryRunAll}
