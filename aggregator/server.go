// Package aggregator is the outermost server of the chain: clients reach
// every other server through it, and it serves the root discovery
// documents (/api, /apis) that list the groups of the whole chain. It
// serves apiregistration.k8s.io/v1 APIServices, keeps a Local one for
// every group version the chain serves (autoregister.go), and sends the
// requests of remote ones to their extension servers (proxyhandler.go),
// whose availability it checks (availability.go) and whose groups it
// lists in discovery (remotediscovery.go).
package aggregator

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/proxy/serviceresolver"
	"github.com/capstan-io/capstan/server"
	"github.com/capstan-io/capstan/storage/storagefactory"
)

// Config is the aggregator's configuration.
type Config struct {
	Generic server.CompletedConfig
	// Storage makes the storage of APIServices.
	Storage *storagefactory.Factory
	Logger  *slog.Logger
	Proxy   ProxyConfig
}

// ProxyConfig is how requests reach extension servers.
type ProxyConfig struct {
	// ClientCertFile and ClientKeyFile are the front-proxy client
	// certificate (--proxy-client-cert-file, --proxy-client-key-file).
	ClientCertFile, ClientKeyFile string
	// EndpointRouting sends to a ready endpoint of an APIService's Service
	// rather than its cluster IP (--enable-aggregator-routing).
	EndpointRouting bool
	// RejectRedirects answers a backend's redirect with 502
	// (--aggregator-reject-forwarding-redirect).
	RejectRedirects bool
}

// Server is the aggregator.
type Server struct {
	Server *server.Server
}

// New builds the aggregator in front of delegate.
func (c Config) New(delegate *server.Server) (*Server, error) {
	s, err := c.Generic.New("kube-aggregator", delegate)
	if err != nil {
		return nil, err
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	// What the delegates serve before any CRD is read: the group versions
	// of the APIServices kept from the start.
	builtIn := localGroupVersions(s.Discovery())
	store, err := c.apiServiceStore()
	if err != nil {
		return nil, err
	}
	if err := s.InstallAPIGroup(apiRegistrationGroup(store)); err != nil {
		return nil, err
	}
	c.startAutoregistration(s, builtIn)
	if err := c.startProxy(s); err != nil {
		return nil, err
	}
	return &Server{Server: s}, nil
}

// startProxy serves remote APIServices: their routes and availability
// follow the APIServices from a post-start hook.
func (c Config) startProxy(s *server.Server) error {
	var cert *clientCert
	if c.Proxy.ClientCertFile != "" {
		var err error
		if cert, err = newClientCert(c.Proxy.ClientCertFile, c.Proxy.ClientKeyFile); err != nil {
			return err
		}
	}
	kube, err := kubernetes.NewForConfig(s.LoopbackClientConfig())
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(kube, 0)
	resolver := listerResolver(factory, c.Proxy.EndpointRouting)
	routes := newRoutes(cert)
	s.SetResourceHandler(&proxyHandler{routes: routes, resolver: resolver, rejectRedirects: c.Proxy.RejectRedirects,
		logger: c.Logger.With("component", "aggregator-proxy")})
	s.AddPostStartHook("apiservice-registration-controller", func(hc server.HookContext) error {
		client, err := restClient(hc.LoopbackClientConfig, apiregv1.SchemeGroupVersion)
		if err != nil {
			return err
		}
		inf := informer(client, "apiservices", &apiregv1.APIService{})
		a := newAvailability(client, inf, resolver, routes,
			published{discovery: newRemoteDiscovery(s), openAPI: newRemoteOpenAPI(s.OpenAPICatalog())},
			c.Logger.With("component", "apiservice-availability"))
		onService := func(obj any) {
			if m, err := cacheMeta(obj); err == nil {
				a.serviceChanged(m.namespace, m.name)
			}
		}
		handler := cache.ResourceEventHandlerFuncs{AddFunc: onService, UpdateFunc: func(_, obj any) { onService(obj) }, DeleteFunc: onService}
		_, _ = factory.Core().V1().Services().Informer().AddEventHandler(handler)
		_, _ = factory.Discovery().V1().EndpointSlices().Informer().AddEventHandler(handler)
		factory.Start(hc.Done())
		go inf.RunWithContext(hc)
		go a.run(hc)
		synced := factory.WaitForCacheSync(hc.Done())
		for typ, ok := range synced {
			if !ok {
				return fmt.Errorf("aggregator: %v informer did not sync", typ)
			}
		}
		if !cache.WaitForCacheSync(hc.Done(), inf.HasSynced) {
			return fmt.Errorf("aggregator: apiservices informer did not sync: %w", context.Cause(hc))
		}
		return nil
	})
	return nil
}

// serviceKey is the namespace and name of a Service, or of the Service an
// EndpointSlice belongs to.
type serviceKey struct{ namespace, name string }

func cacheMeta(obj any) (serviceKey, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	switch o := obj.(type) {
	case *corev1.Service:
		return serviceKey{o.Namespace, o.Name}, nil
	case *discoveryv1.EndpointSlice:
		return serviceKey{o.Namespace, o.Labels[discoveryv1.LabelServiceName]}, nil
	}
	return serviceKey{}, fmt.Errorf("unexpected %T", obj)
}

// listerResolver resolves Services from the informers' caches.
func listerResolver(factory informers.SharedInformerFactory, endpointRouting bool) serviceresolver.Resolver {
	services := factory.Core().V1().Services().Lister()
	slices := factory.Discovery().V1().EndpointSlices().Lister()
	return serviceresolver.Resolver{EndpointRouting: endpointRouting,
		Services: func(_ context.Context, namespace, name string) (*corev1.Service, error) {
			return services.Services(namespace).Get(name)
		},
		Slices: func(_ context.Context, namespace, service string) ([]*discoveryv1.EndpointSlice, error) {
			return slices.EndpointSlices(namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service}))
		}}
}
