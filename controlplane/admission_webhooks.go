package controlplane

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/admission/webhook"
	"github.com/capstan-io/capstan/registry"
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
		source := webhook.NewSource(mutating, clusterIPResolver(d.store("", "services")), creds)
		namespaces := namespaceGetter(d.store("", "namespaces"))
		getNamespace := func(ctx context.Context, name string) (*corev1.Namespace, error) { return namespaces(ctx, name) }
		kind := "validating"
		var plugin any = webhook.NewValidating(source, getNamespace)
		if mutating {
			kind, plugin = "mutating", webhook.NewMutating(source, getNamespace)
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

// clusterIPResolver resolves a webhook's Service as kube does by default:
// to its cluster IP and the Service port, or its ExternalName host.
func clusterIPResolver(services *registry.Store) webhook.ServiceResolver {
	return func(ctx context.Context, namespace, name string, port int32) (*url.URL, error) {
		obj, err := services.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{ResourceVersion: "0"})
		if err != nil {
			return nil, err
		}
		svc := obj.(*corev1.Service)
		switch svc.Spec.Type {
		case corev1.ServiceTypeExternalName:
			return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
		case corev1.ServiceTypeClusterIP, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				return nil, fmt.Errorf(`cannot route to service with ClusterIP "None"`)
			}
			for _, p := range svc.Spec.Ports {
				if p.Port == port {
					return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(port)))}, nil
				}
			}
			return nil, fmt.Errorf("no service port %d found for service %q", port, svc.Name)
		default:
			return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
		}
	}
}
