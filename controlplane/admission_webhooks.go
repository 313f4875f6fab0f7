package controlplane

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/admission/webhook"
	"github.com/capstan-io/capstan/proxy/serviceresolver"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/request"
	"github.com/capstan-io/capstan/server"
)

// webhookPlugin is the factory of MutatingAdmissionWebhook (mutating) or
// ValidatingAdmissionWebhook: its configuration is a WebhookAdmission,
// whose kubeconfig gives the webhooks' client credentials. The plugin's
// configurations are listed and watched by a post-start hook.
func (c Config) webhookPlugin(d admissionDeps, mutating bool) plugins.Factory {
	return func(config []byte) (any, error) {
		creds, err := webhook.LoadCredentials(config)
		if err != nil {
			return nil, err
		}
		source := webhook.NewSource(mutating, c.serviceResolver(d), creds)
		namespaces := namespaceGetter(d.store("", "namespaces"))
		getNamespace := func(ctx context.Context, name string) (*corev1.Namespace, error) { return namespaces(ctx, name) }
		kind := "validating"
		var plugin any = webhook.NewValidating(source, getNamespace, c.Generic.Authorization)
		if mutating {
			kind, plugin = "mutating", webhook.NewMutating(source, getNamespace, c.Generic.Authorization)
		}
		d.server.AddPostStartHook("start-"+kind+"-admission-webhook-configurations", func(hc server.HookContext) error {
			client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
			if err != nil {
				return err
			}
			go func() {
				if err := source.Run(hc, client); err != nil && hc.Err() == nil {
					c.Logger.Error("admission webhook configurations", "kind", kind, "err", err)
				}
			}()
			return nil
		})
		return plugin, nil
	}
}

// serviceResolver resolves a webhook's Service as kube does: to its
// cluster IP or ExternalName host, or with --enable-aggregator-routing to
// one of its ready endpoints, read from the watch caches.
func (c Config) serviceResolver(d admissionDeps) webhook.ServiceResolver {
	services, slices := d.store("", "services"), d.store("discovery.k8s.io", "endpointslices")
	r := serviceresolver.Resolver{EndpointRouting: c.Admission.EndpointRouting,
		Services: func(ctx context.Context, namespace, name string) (*corev1.Service, error) {
			obj, err := services.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{ResourceVersion: "0"})
			if err != nil {
				return nil, err
			}
			return obj.(*corev1.Service), nil
		}}
	if slices != nil {
		r.Slices = sliceLister(slices)
	}
	return r.Resolve
}

// sliceLister lists a Service's EndpointSlices from the watch cache.
func sliceLister(slices *registry.Store) serviceresolver.SliceLister {
	return func(ctx context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error) {
		sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})
		obj, err := slices.List(request.WithNamespace(ctx, namespace), &rest.ListOptions{ResourceVersion: "0", LabelSelector: sel})
		if err != nil {
			return nil, err
		}
		items := obj.(*discoveryv1.EndpointSliceList).Items
		out := make([]*discoveryv1.EndpointSlice, len(items))
		for i := range items {
			out[i] = &items[i]
		}
		return out, nil
	}
}
