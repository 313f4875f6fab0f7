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
func (c *Config) CreateServerChain() (*server.Server, error) {
	notFound := server.NewEmptyDelegate(server.WriteNotFound(c.Generic))
	crd, err := apiextensions.Config{Generic: c.Generic, Storage: c.Storage, Logger: c.Logger}.New(notFound)
	if err != nil {
		return nil, err
	}
	kube, err := controlplane.Config{Generic: c.Generic, Storage: c.Storage, EventTTL: c.EventTTL, Logger: c.Logger, Services: c.Services,
		Authorization: c.Authorization, Authentication: c.Authentication, LazyResources: crd.CustomResources,
		Workloads: c.Workloads, Admission: c.Admission, RootCA: c.RootCA, Disabled: c.DisabledControllers}.New(crd.Server)
	if err != nil {
		return nil, err
	}
	agg, err := aggregator.Config{Generic: c.Generic}.New(kube.Server)
	if err != nil {
		return nil, err
	}
	if fc := c.Generic.FlowControl; fc != nil {
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
// Config once the server chain serves.
func Run(ctx context.Context, o *Options, out io.Writer, ready func(*Config)) error {
	o.Complete()
	if err := o.Validate(); err != nil {
		return err
	}
	restoreGC := relaxGCForStart()
	defer restoreGC()
	logger := o.Logs.logger(out)
	c, err := NewConfig(ctx, o, logger)
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
		go func() {
			select {
			case <-hc.HooksDone:
			case <-hc.Done():
			}
			restoreGC()
		}()
		if ready != nil {
			ready(c)
		}
		return nil
	})
	return prepared.Run(ctx)
}

// printUsage tells a new user how to reach the server with kubectl.
func printUsage(out io.Writer, c *Config) {
	if c.Kubeconfig == "" {
		fmt.Fprintf(out, "capstan is serving at %s\n", c.URL)
		return
	}
	fmt.Fprintf(out, "\ncapstan is serving at %s\n\n  export KUBECONFIG=%s\n  kubectl get namespaces\n\n", c.URL, c.Kubeconfig)
}
