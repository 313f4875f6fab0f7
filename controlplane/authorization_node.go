package controlplane

import (
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	authznode "github.com/capstan-io/capstan/authz/node"
	"github.com/capstan-io/capstan/server"
)

// nodeGraphHook starts the informers of the Node authorizer's graph (pods,
// persistent volumes, volume attachments) on the loopback client and hands
// the graph to a once they have synced, which the server's readiness waits
// for. Until then kubelets reach no object, as in kube before its graph is
// populated.
func nodeGraphHook(a *authznode.Authorizer) server.HookFunc {
	return func(hc server.HookContext) error {
		client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		factory := informers.NewSharedInformerFactory(client, 0)
		graph, synced, err := authznode.NewGraph(factory)
		if err != nil {
			return err
		}
		factory.Start(hc.Done())
		if !cache.WaitForCacheSync(hc.Done(), synced...) {
			return fmt.Errorf("node authorizer informers did not sync: %w", hc.Err())
		}
		a.SetGraph(graph)
		return nil
	}
}
