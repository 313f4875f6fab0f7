package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/admission/resourcequota"
	"github.com/capstan-io/capstan/apis/core"
	quotacontroller "github.com/capstan-io/capstan/controlplane/controllers/resourcequota"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/server"
)

// quotaPlugin is the ResourceQuota plugin's factory: quotas are listed
// from the watch cache, and charged through an optimistic update of their
// status (one etcd write; a conflict reads the latest and tries again).
func quotaPlugin(quotas *registry.Store) plugins.Factory {
	status := quotas.WithStrategy(core.ResourceQuotaStatusStrategy{})
	list := func(ctx context.Context, namespace string) ([]corev1.ResourceQuota, error) {
		obj, err := quotas.List(request.WithNamespace(ctx, namespace), &rest.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		return obj.(*corev1.ResourceQuotaList).Items, nil
	}
	charge := func(ctx context.Context, namespace, name string, update func(*corev1.ResourceQuota) error) error {
		_, _, err := status.Update(request.WithNamespace(ctx, namespace), name,
			rest.UpdatedObjectFunc(func(_ context.Context, old runtime.Object) (runtime.Object, error) {
				q := old.(*corev1.ResourceQuota).DeepCopy()
				return q, update(q)
			}), nil, nil, false, &metav1.UpdateOptions{})
		return err
	}
	return func(config []byte) (any, error) {
		cfg, err := resourcequota.ParseConfiguration(config)
		if err != nil {
			return nil, err
		}
		return resourcequota.New(list, charge, cfg), nil
	}
}

// runQuotaController keeps quotas' status true (kube-controller-manager's
// resourcequota controller).
func (c Config) runQuotaController(hc server.HookContext) error {
	client, meta, disco, err := loopbackClients(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	ctrl, err := quotacontroller.New(quotacontroller.Config{Client: client, Metadata: meta, Discovery: disco, Logger: c.Logger})
	if err != nil {
		return fmt.Errorf("resourcequota controller: %w", err)
	}
	go ctrl.Run(hc, 2)
	return nil
}
