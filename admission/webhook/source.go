package webhook

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/admission"
)

// readyWait is how long an admission waits for the first list of the
// configurations, kube's.
const readyWait = 10 * time.Second

// Source keeps the webhooks of every configuration, compiled once per
// version of the configuration, in kube's order: configurations by name,
// webhooks as each lists them.
type Source struct {
	clients *clients
	synced  chan struct{}

	mu         sync.RWMutex // guards the fields below
	validating []*hook
	mutating   []*hook
	compiled   map[types.UID]compiledConfig
}

type compiledConfig struct {
	resourceVersion string
	hooks           []*hook
}

// NewSource returns a source whose services resolve with resolve.
func NewSource(resolve ServiceResolver) *Source {
	return &Source{clients: newClients(resolve), synced: make(chan struct{}), compiled: map[types.UID]compiledConfig{}}
}

// Run lists and watches the configurations through client until ctx ends.
func (s *Source) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	vwc := factory.Admissionregistration().V1().ValidatingWebhookConfigurations()
	mwc := factory.Admissionregistration().V1().MutatingWebhookConfigurations()
	var rebuild sync.Mutex
	changed := func(any) {
		rebuild.Lock()
		defer rebuild.Unlock()
		s.rebuild(vwc.Lister().List, mwc.Lister().List)
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed}
	if _, err := vwc.Informer().AddEventHandler(handler); err != nil {
		return err
	}
	if _, err := mwc.Informer().AddEventHandler(handler); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return errors.New("webhook configurations: informers did not sync")
		}
	}
	changed(nil)
	close(s.synced)
	return nil
}

func (s *Source) rebuild(listV func(labels.Selector) ([]*arv1.ValidatingWebhookConfiguration, error),
	listM func(labels.Selector) ([]*arv1.MutatingWebhookConfiguration, error)) {
	vs, _ := listV(labels.Everything())
	ms, _ := listM(labels.Everything())
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	s.mu.RLock()
	old := s.compiled
	s.mu.RUnlock()
	compiled := map[types.UID]compiledConfig{}
	keep := func(uid types.UID, rv string, compile func() []*hook) []*hook {
		c, ok := old[uid]
		if !ok || c.resourceVersion != rv {
			c = compiledConfig{resourceVersion: rv, hooks: compile()}
		} else {
			// Unchanged: its clients stay in use.
			for _, h := range c.hooks {
				s.clients.keep(h.client)
			}
		}
		compiled[uid] = c
		return c.hooks
	}
	var validating, mutating []*hook
	for _, c := range vs {
		validating = append(validating, keep(c.UID, c.ResourceVersion, func() []*hook {
			out := make([]*hook, len(c.Webhooks))
			for i := range c.Webhooks {
				out[i] = compileHook(c.Name, validatingSpec(&c.Webhooks[i]), s.clients)
			}
			return out
		})...)
	}
	for _, c := range ms {
		mutating = append(mutating, keep(c.UID, c.ResourceVersion, func() []*hook {
			out := make([]*hook, len(c.Webhooks))
			for i := range c.Webhooks {
				h := &c.Webhooks[i]
				out[i] = compileHook(c.Name, mutatingSpec(h), s.clients)
				out[i].reinvoke = h.ReinvocationPolicy != nil && *h.ReinvocationPolicy == arv1.IfNeededReinvocationPolicy
			}
			return out
		})...)
	}
	s.mu.Lock()
	s.validating, s.mutating, s.compiled = validating, mutating, compiled
	s.mu.Unlock()
	s.clients.sweep()
}

// hooks returns the current webhooks, waiting a while for the first list.
func (s *Source) hooks(ctx context.Context, a *admission.Attributes, mutating bool) ([]*hook, error) {
	select {
	case <-s.synced:
	default:
		t := time.NewTimer(readyWait)
		defer t.Stop()
		select {
		case <-s.synced:
		case <-t.C:
			return nil, apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errors.New("not yet ready to handle request"))
		case <-ctx.Done():
			return nil, apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errors.New("not yet ready to handle request"))
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if mutating {
		return s.mutating, nil
	}
	return s.validating, nil
}
