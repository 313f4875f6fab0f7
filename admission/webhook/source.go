package webhook

import (
	"context"
	"errors"
	"sort"
	"sync"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/admission"
)

// Source keeps the webhooks of every configuration, compiled once per
// version of the configuration, in kube's order: configurations by name,
// webhooks as each lists them.
type Source struct {
	clients  *clients
	mutating bool // of MutatingWebhookConfigurations, else of validating ones
	synced   chan struct{}

	mu       sync.RWMutex // guards the fields below
	hooks    []*hook
	compiled map[types.UID]compiledConfig
}

type compiledConfig struct {
	resourceVersion string
	hooks           []*hook
}

// NewSource returns a source of the mutating or the validating
// configurations, whose services resolve with resolve and whose calls
// carry creds.
func NewSource(mutating bool, resolve ServiceResolver, creds *Credentials) *Source {
	return &Source{clients: newClients(resolve, creds), mutating: mutating, synced: make(chan struct{}),
		compiled: map[types.UID]compiledConfig{}}
}

// Run lists and watches the configurations through client until ctx ends.
func (s *Source) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	var informer cache.SharedIndexInformer
	var list func() []config
	if s.mutating {
		i := factory.Admissionregistration().V1().MutatingWebhookConfigurations()
		informer, list = i.Informer(), func() []config { cs, _ := i.Lister().List(labels.Everything()); return mutatingConfigs(cs) }
	} else {
		i := factory.Admissionregistration().V1().ValidatingWebhookConfigurations()
		informer, list = i.Informer(), func() []config { cs, _ := i.Lister().List(labels.Everything()); return validatingConfigs(cs) }
	}
	// One rebuild at a time, of the lister's whole state: events may come
	// faster than rebuilds, and only the last state matters.
	var rebuild sync.Mutex
	changed := func(any) {
		rebuild.Lock()
		defer rebuild.Unlock()
		s.rebuild(list())
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed}
	if _, err := informer.AddEventHandler(handler); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return errors.New("webhook configurations: informer did not sync")
		}
	}
	changed(nil)
	close(s.synced)
	return nil
}

// config is a configuration of either kind, its webhooks not compiled yet.
type config struct {
	name, resourceVersion string
	uid                   types.UID
	compile               func(*clients) []*hook
}

func validatingConfigs(cs []*arv1.ValidatingWebhookConfiguration) []config {
	out := make([]config, len(cs))
	for i, c := range cs {
		out[i] = config{c.Name, c.ResourceVersion, c.UID, func(cl *clients) []*hook {
			hooks := make([]*hook, len(c.Webhooks))
			for j := range c.Webhooks {
				hooks[j] = compileHook(c.Name, validatingSpec(&c.Webhooks[j]), cl)
			}
			return hooks
		}}
	}
	return out
}

func mutatingConfigs(cs []*arv1.MutatingWebhookConfiguration) []config {
	out := make([]config, len(cs))
	for i, c := range cs {
		out[i] = config{c.Name, c.ResourceVersion, c.UID, func(cl *clients) []*hook {
			hooks := make([]*hook, len(c.Webhooks))
			for j := range c.Webhooks {
				h := &c.Webhooks[j]
				hooks[j] = compileHook(c.Name, mutatingSpec(h), cl)
				hooks[j].reinvoke = h.ReinvocationPolicy != nil && *h.ReinvocationPolicy == arv1.IfNeededReinvocationPolicy
			}
			return hooks
		}}
	}
	return out
}

// rebuild makes the hook list of configs, in kube's order (configurations
// by name), compiling only the configurations that changed.
func (s *Source) rebuild(configs []config) {
	sort.Slice(configs, func(i, j int) bool { return configs[i].name < configs[j].name })
	s.mu.RLock()
	old := s.compiled
	s.mu.RUnlock()
	compiled := make(map[types.UID]compiledConfig, len(configs))
	var hooks []*hook
	for _, c := range configs {
		cc, ok := old[c.uid]
		if !ok || cc.resourceVersion != c.resourceVersion {
			cc = compiledConfig{resourceVersion: c.resourceVersion, hooks: c.compile(s.clients)}
		} else {
			for _, h := range cc.hooks {
				s.clients.keep(h.client)
			}
		}
		compiled[c.uid] = cc
		hooks = append(hooks, cc.hooks...)
	}
	s.mu.Lock()
	s.hooks, s.compiled = hooks, compiled
	s.mu.Unlock()
	s.clients.sweep()
}

// current returns the webhooks, waiting a while for the first list.
func (s *Source) current(ctx context.Context, a *admission.Attributes) ([]*hook, error) {
	if err := admission.WaitSynced(ctx, s.synced, a); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.hooks, nil
}
