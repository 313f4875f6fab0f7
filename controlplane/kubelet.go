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

// addProxySubresources adds pods/proxy, nodes/proxy and services/proxy to
// core/v1 (groups[0]), once the EndpointSlices services/proxy reads are
// built; none without a kubelet client.
func (c Config) addProxySubresources(groups []builtGroup, k *core.Kubelets) {
	if k == nil {
		return
	}
	coreGroup := groups[0]
	p := &core.Proxies{Kubelets: k, Services: coreGroup.stores["services"]}
	if families := c.Services.families(); len(families) > 0 {
		p.Family = families[0]
	}
	if slices := (admissionDeps{groups: groups}).store("discovery.k8s.io", "endpointslices"); slices != nil {
		p.Slices = sliceLister(slices)
	}
	v := &coreGroup.group.Versions[0]
	v.Resources = append(v.Resources,
		endpoints.Resource{Name: "pods/proxy", Kind: "PodProxyOptions", Storage: core.NewPodProxyREST(p), NoFieldManager: true},
		endpoints.Resource{Name: "nodes/proxy", Kind: "NodeProxyOptions", Storage: core.NewNodeProxyREST(p), NoFieldManager: true},
		endpoints.Resource{Name: "services/proxy", Kind: "ServiceProxyOptions", Storage: core.NewServiceProxyREST(p), NoFieldManager: true})
}
