package controlplane

import (
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/controlplane/controllers/apiserveridentity"
	"github.com/capstan-io/capstan/server"
)

// installIdentity adds kube's identity lease hooks, which run on every
// replica: this server's lease in kube-system, renewed until shutdown,
// and the collection of the expired leases of servers gone. Both wait
// for kube-system to exist.
func (c Config) installIdentity(s *server.Server) {
	s.AddPostStartHook("start-kube-apiserver-identity-lease-controller", func(hc server.HookContext) error {
		client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		ctrl := apiserveridentity.New(apiserveridentity.Config{Client: client, Hostname: c.HA.Hostname,
			Logger: c.Logger.With("controller", "apiserver-identity-lease")})
		go func() {
			if waitFor(hc, c.systemNamespacesDone) == nil {
				ctrl.Run(hc)
			}
		}()
		return nil
	})
	s.AddPostStartHook("start-kube-apiserver-identity-lease-garbage-collector", func(hc server.HookContext) error {
		client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		gc := &apiserveridentity.GC{Client: client, Logger: c.Logger.With("controller", "apiserver-identity-lease-gc")}
		// Collecting is no part of the start: after it.
		hc.AfterHooks(func() { gc.Run(hc) })
		return nil
	})
}
