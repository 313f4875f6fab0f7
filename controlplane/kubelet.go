package controlplane

import (
	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/endpoints"
)

// kubeletSubresources are the node-facing subresources of core/v1, served
// through the kubelets.
func kubeletSubresources(k *core.Kubelets) []endpoints.Resource {
	return []endpoints.Resource{
		{Name: "pods/log", Kind: "Pod", Storage: core.NewLogREST(k), NoFieldManager: true},
	}
}
