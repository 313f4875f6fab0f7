package controlplane

import (
	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/endpoints"
)

// kubelets are what the node-facing subresources need but their stores;
// nil without a kubelet client.
func (c Config) kubelets() *core.Kubelets {
	if c.Kubelet == nil {
		return nil
	}
	return &core.Kubelets{Client: c.Kubelet, Authorizer: c.Generic.Authorization}
}

// kubeletSubresources are the node-facing subresources of core/v1, served
// through the kubelets.
func kubeletSubresources(k *core.Kubelets) []endpoints.Resource {
	return []endpoints.Resource{
		{Name: "pods/log", Kind: "Pod", Storage: core.NewLogREST(k), NoFieldManager: true},
		{Name: "pods/exec", Kind: "PodExecOptions", Storage: core.NewExecREST(k), NoFieldManager: true},
		{Name: "pods/attach", Kind: "PodAttachOptions", Storage: core.NewAttachREST(k), NoFieldManager: true},
		{Name: "pods/portforward", Kind: "PodPortForwardOptions", Storage: core.NewPortForwardREST(k), NoFieldManager: true},
	}
}
