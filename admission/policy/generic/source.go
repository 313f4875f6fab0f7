package generic

import (
	"context"
	"errors"
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/admission"
)

// Kind says how to read one kind of policy and its bindings: P the
// policy, B the binding, C the policy compiled.
type Kind[P, B metav1.Object, C any] struct {
	// Informers are the policies' and the bindings' informers of factory.
	Informers func(factory informers.SharedInformerFactory) (policies, bindings cache.SharedIndexInformer)
	// PolicyName is the policy a binding binds.
	PolicyName func(B) string
	// Compile compiles a policy; it is called once per resourceVersion.
	Compile func(P) C
}

// Bound is a compiled policy with its bindings, by name.
type Bound[B any, C any] struct {
	Policy   C
	Bindings []B
}

// Source keeps the policies of one kind, compiled once per version, with
// their bindings: policies by name, each policy's bindings by name. A
// policy without bindings is left out: it does nothing.
type Source[P, B metav1.Object, C any] struct {
	kind   Kind[P, B, C]
	synced chan struct{}

	mu       sync.RWMutex // guards the fields below
	bound    []Bound[B, C]
	compiled map[types.UID]compiled[C]
}

type compiled[C any] struct {
	resourceVersion string
	policy          C
}

// NewSource returns an empty source; Run fills it.
func NewSource[P, B metav1.Object, C any](kind Kind[P, B, C]) *Source[P, B, C] {
	return &Source[P, B, C]{kind: kind, synced: make(chan struct{}), compiled: map[types.UID]compiled[C]{}}
}

// Run lists and watches policies and bindings through client until ctx ends.
func (s *Source[P, B, C]) Run(ctx context.Context, client kubernetes.Interface) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	pi, bi := s.kind.Informers(factory)
	var rebuild sync.Mutex
	changed := func(any) {
		rebuild.Lock()
		defer rebuild.Unlock()
		s.rebuild(listOf[P](pi), listOf[B](bi))
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed}
	for _, inf := range []cache.SharedIndexInformer{pi, bi} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
	}
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return errors.New("admission policies: informers did not sync")
		}
	}
	changed(nil)
	close(s.synced)
	return nil
}

func listOf[T metav1.Object](inf cache.SharedIndexInformer) []T {
	var out []T
	for _, o := range inf.GetStore().List() {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

func (s *Source[P, B, C]) rebuild(ps []P, bs []B) {
	byPolicy := map[string][]B{}
	for _, b := range bs {
		name := s.kind.PolicyName(b)
		byPolicy[name] = append(byPolicy[name], b)
	}
	s.mu.RLock()
	old := s.compiled
	s.mu.RUnlock()
	next := make(map[types.UID]compiled[C], len(ps))
	var bound []Bound[B, C]
	for _, p := range ps {
		c, ok := old[p.GetUID()]
		if !ok || c.resourceVersion != p.GetResourceVersion() {
			c = compiled[C]{resourceVersion: p.GetResourceVersion(), policy: s.kind.Compile(p)}
		}
		next[p.GetUID()] = c
		if b := byPolicy[p.GetName()]; len(b) > 0 {
			bound = append(bound, Bound[B, C]{c.policy, b})
		}
	}
	s.mu.Lock()
	s.bound, s.compiled = bound, next
	s.mu.Unlock()
}

// Current returns the bound policies, waiting a while for the first lists.
func (s *Source[P, B, C]) Current(ctx context.Context, a *admission.Attributes) ([]Bound[B, C], error) {
	if err := admission.WaitSynced(ctx, s.synced, a); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bound, nil
}
