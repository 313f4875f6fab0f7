package validating

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

// Source keeps the policies, compiled once per version, with their
// bindings: policies by name, each policy's bindings by name.
type Source struct {
	synced chan struct{}

	mu       sync.RWMutex // guards the fields below
	bound    []boundPolicy
	compiled map[types.UID]compiledPolicy
}

type boundPolicy struct {
	*policy
	bindings []*arv1.ValidatingAdmissionPolicyBinding
}

type compiledPolicy struct {
	resourceVersion string
	policy          *policy
}

// NewSource returns an empty source; Run fills it.
func NewSource() *Source {
	return &Source{synced: make(chan struct{}), compiled: map[types.UID]compiledPolicy{}}
}

// Run lists and watches policies and bindings through client until ctx ends.
func (s *Source) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	pi := factory.Admissionregistration().V1().ValidatingAdmissionPolicies()
	bi := factory.Admissionregistration().V1().ValidatingAdmissionPolicyBindings()
	var rebuild sync.Mutex
	changed := func(any) {
		rebuild.Lock()
		defer rebuild.Unlock()
		ps, _ := pi.Lister().List(labels.Everything())
		bs, _ := bi.Lister().List(labels.Everything())
		s.rebuild(ps, bs)
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed}
	for _, inf := range []cache.SharedIndexInformer{pi.Informer(), bi.Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
	}
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return errors.New("validating admission policies: informers did not sync")
		}
	}
	changed(nil)
	close(s.synced)
	return nil
}

func (s *Source) rebuild(ps []*arv1.ValidatingAdmissionPolicy, bs []*arv1.ValidatingAdmissionPolicyBinding) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	sort.Slice(bs, func(i, j int) bool { return bs[i].Name < bs[j].Name })
	byPolicy := map[string][]*arv1.ValidatingAdmissionPolicyBinding{}
	for _, b := range bs {
		byPolicy[b.Spec.PolicyName] = append(byPolicy[b.Spec.PolicyName], b)
	}
	s.mu.RLock()
	old := s.compiled
	s.mu.RUnlock()
	compiled := make(map[types.UID]compiledPolicy, len(ps))
	var bound []boundPolicy
	for _, p := range ps {
		c, ok := old[p.UID]
		if !ok || c.resourceVersion != p.ResourceVersion {
			c = compiledPolicy{resourceVersion: p.ResourceVersion, policy: compilePolicy(p)}
		}
		compiled[p.UID] = c
		// A policy without bindings does nothing.
		if b := byPolicy[p.Name]; len(b) > 0 {
			bound = append(bound, boundPolicy{c.policy, b})
		}
	}
	s.mu.Lock()
	s.bound, s.compiled = bound, compiled
	s.mu.Unlock()
}

// current returns the bound policies, waiting a while for the first lists.
func (s *Source) current(ctx context.Context, a *admission.Attributes) ([]boundPolicy, error) {
	if err := admission.WaitSynced(ctx, s.synced, a); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bound, nil
}
