package controlplane

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/capstan-io/capstan/admission/match"
	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/admission/policy/generic"
	"github.com/capstan-io/capstan/admission/policy/mutating"
	"github.com/capstan-io/capstan/admission/policy/validating"
	"github.com/capstan-io/capstan/server"
)

// validatingPolicyPlugin is the factory of ValidatingAdmissionPolicy.
func (c Config) validatingPolicyPlugin(d admissionDeps) plugins.Factory {
	return func([]byte) (any, error) {
		source := validating.NewSource()
		return c.policyPlugin(d, "validating", source.Run, func(ns match.NamespaceGetter, params generic.ParamLookup) any {
			return validating.New(source, generic.Deps{Namespaces: ns, Params: params, Authz: c.Generic.Authorization})
		}), nil
	}
}

// mutatingPolicyPlugin is the factory of MutatingAdmissionPolicy.
func (c Config) mutatingPolicyPlugin(d admissionDeps) plugins.Factory {
	return func([]byte) (any, error) {
		source := mutating.NewSource()
		return c.policyPlugin(d, "mutating", source.Run, func(ns match.NamespaceGetter, params generic.ParamLookup) any {
			return mutating.New(source, generic.Deps{Namespaces: ns, Params: params, Authz: c.Generic.Authorization})
		}), nil
	}
}

// policyPlugin builds an admission policy plugin: its policies and
// bindings are listed and watched (run), and its params read, through the
// loopback client once the server serves.
func (c Config) policyPlugin(d admissionDeps, kind string, run func(context.Context, kubernetes.Interface) error,
	build func(match.NamespaceGetter, generic.ParamLookup) any) any {
	params := &paramLookup{ready: make(chan struct{})}
	namespaces := namespaceGetter(d.store("", "namespaces"))
	getNamespace := func(ctx context.Context, name string) (*corev1.Namespace, error) { return namespaces(ctx, name) }
	d.server.AddPostStartHook("start-"+kind+"-admission-policies", func(hc server.HookContext) error {
		client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		dyn, err := dynamic.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		disc, err := discovery.NewDiscoveryClientForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		params.dynamic = dyn
		params.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
		close(params.ready)
		go func() {
			if err := run(hc, client); err != nil && hc.Err() == nil {
				c.Logger.Error("admission policies", "kind", kind, "err", err)
			}
		}()
		return nil
	})
	return build(getNamespace, params)
}

// paramLookup reads params of any kind, built-in or custom, through the
// loopback client; kinds map to resources by discovery, read again when a
// kind is not found (a CRD made since).
type paramLookup struct {
	ready   chan struct{} // closed once the fields below are set
	dynamic dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	mu      sync.Mutex // serializes the mapper's resets
}

func (p *paramLookup) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	<-p.ready
	m, err := p.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		p.mu.Lock()
		p.mapper.Reset()
		p.mu.Unlock()
		m, err = p.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

func (p *paramLookup) Namespaced(gvk schema.GroupVersionKind) (bool, error) {
	m, err := p.mapping(gvk)
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func (p *paramLookup) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (map[string]any, error) {
	m, err := p.mapping(gvk)
	if err != nil {
		return nil, err
	}
	u, err := p.dynamic.Resource(m.Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	return u.Object, nil
}

func (p *paramLookup) List(ctx context.Context, gvk schema.GroupVersionKind, namespace string, sel labels.Selector) ([]map[string]any, error) {
	m, err := p.mapping(gvk)
	if err != nil {
		return nil, err
	}
	list, err := p.dynamic.Resource(m.Resource).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String(), ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list.Items))
	for i := range list.Items {
		out[i] = list.Items[i].Object
	}
	return out, nil
}
