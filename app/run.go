package app

import (
	"context"
	"fmt"
	"io"

	"github.com/capstan-io/capstan/aggregator"
	"github.com/capstan-io/capstan/apiextensions"
	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/server"
)

// CreateServerChain builds aggregator -> kube -> apiextensions -> NotFound,
// joined by delegation.
func (p *Process) CreateServerChain() (*server.Server, error) {
	notFound := server.NewEmptyDelegate(server.WriteNotFound(p.Generic))
	crd, err := apiextensions.Config{Generic: p.Generic, Storage: p.Storage, Logger: p.Logger}.New(notFound)
	if err != nil {
		return nil, err
	}
	kube, err := controlplane.Config{Generic: p.Generic, Storage: p.Storage, EventTTL: p.EventTTL, Logger: p.Logger, Services: p.Services,
		Authorization: p.Authorization, Authentication: p.Authentication, LazyResources: crd.CustomResources,
		Workloads: p.Workloads, Kubelet: p.Kubelet, Admission: p.Admission, RootCA: p.RootCA, Disabled: p.DisabledControllers,
		HA: p.HA}.New(crd.Server)
	if err != nil {
		return nil, err
	}
	misc := &p.Options.Misc
	agg, err := aggregator.Config{Generic: p.Generic, Storage: p.Storage, Logger: p.Logger, Proxy: aggregator.ProxyConfig{
		ClientCertFile: misc.ProxyClient.CertFile, ClientKeyFile: misc.ProxyClient.KeyFile,
		EndpointRouting: misc.Aggregator.Routing, RejectRedirects: misc.Aggregator.RejectForwardingRedirect,
	}}.New(kube.Server)
	if err != nil {
		return nil, err
	}
	if fc := p.Generic.FlowControl; fc != nil {
		for path, h := range fc.DebugHandlers() {
			agg.Server.Handle(path, h)
		}
		agg.Server.AddPostStartHook("priority-and-fairness-config-consumer", func(hc server.HookContext) error {
			return fc.Run(hc, hc.LoopbackClientConfig)
		})
	}
	return agg.Server, nil
}

// Run runs capstan until ctx is done. ready, if not nil, is called with the
// Process once the server chain serves.
func Run(ctx context.Context, o *Options, out io.Writer, ready func(*Process)) error {
	o.Complete()
	if err := o.Validate(); err != nil {
		return err
	}
	restoreGC := relaxGCForStart()
	defer restoreGC()
	logger := o.Logs.logger(out)
	cfg, err := NewConfig(o, logger)
	if err != nil {
		return err
	}
	c, err := cfg.Start(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	chain, err := c.CreateServerChain()
	if err != nil {
		return err
	}
	if err := c.Generic.APIs.CheckOffered(); err != nil {
		return err
	}
	c.addEncryptionHooks(chain, &o.Etcd.Encryption)
	prepared := chain.PrepareRun()
	chain.AddPostStartHook("capstan-ready-notice", func(hc server.HookContext) error {
		// On a stop before the hooks are done, Run's deferred call restores it.
		hc.AfterHooks(restoreGC)
		if ready != nil {
			ready(c)
		}
		return nil
	})
	return prepared.Run(ctx)
}

// printUsage tells a new user how to reach the server with kubectl.
func printUsage(out io.Writer, c *Process) {
	if c.Kubeconfig == "" {
		fmt.Fprintf(out, "capstan is serving at %s\n", c.URL)
		return
	}
	fmt.Fprintf(out, "\ncapstan is serving at %s\n\n  export KUBECONFIG=%s\n  kubectl get namespaces\n\n", c.URL, c.Kubeconfig)
}
