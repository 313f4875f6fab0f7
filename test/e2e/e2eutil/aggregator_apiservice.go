package e2eutil

import (
	"testing"

	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
)

func (e *Env) AggregatorClient(t *testing.T) aggregatorclient.Interface {
	t.Helper()
	c, err := aggregatorclient.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
