package generic

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"sync"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/match"
)

// Kind says how to read one kind of policy and its bindings: P the
// policy, B the binding, C the policy compiled.
type Kind[P, B metav1.Object, C any] struct {
	// Informers are the policies' and the bindings' informers of factory.
	Informers func(factory informers.SharedInformerFactory) (policies, bindings cache.SharedIndexInformer)
	// PolicyName is the policy a binding binds.
	PolicyName func(B) string
	// MatchResources are a binding's match resources, nil for all.
	MatchResources func(B) *arv1.MatchResources
	// Compile compiles a policy; it is called once per generation.
	Compile func(P) C
}

// Bound is a compiled policy with its bindings, by name.
type Bound[B any, C any] struct {
	Policy   C
	Bindings []*Binding[B]
}

// Binding is a binding with its match resources compiled.
type Binding[B any] struct {
	Binding B
	match   *Matcher
	err     error // why the match resources do not compile
}

// Matches applies the binding's match resources to the write: nil ones
// match everything; ones that do not compile are an error.
func (b *Binding[B]) Matches(ctx context.Context, a *admission.Attributes, namespaces match.NamespaceGetter) (bool, error) {
	if b.err != nil {
		return false, b.err
	}
	return b.match.Matches(ctx, a, namespaces, false)
}

// Source keeps the policies of one kind, compiled once per generation, with
// their bindings: policies by name, each policy's bindings by name. A
// policy without bindings is left out: it does nothing.
type Source[P, B metav1.Object, C any] struct {
	kind       Kind[P, B, C]
	synced     chan struct{}
	syncedOnce sync.Once

	mu       sync.RWMutex // guards the fields below
	bound    []Bound[B, C]
	policies versions[C]
	bindings versions[*Binding[B]]
}

// versions are what each object compiled to, with the version of the
// object it was compiled from.
type versions[T any] map[types.UID]compiled[T]

type compiled[T any] struct {
	version string
	value   T
}

// of is what o, at version, compiles to: the old compilation when o is
// still at the version it was compiled from.
func (old versions[T]) of(o metav1.Object, version string, compile func() T) compiled[T] {
	c, ok := old[o.GetUID()]
	if !ok || c.version != version {
		c = compiled[T]{version: version, value: compile()}
	}
	return c
}

// generation is the version of a policy's spec: its generation, which
// a write of its status (the type checking kube's controller records)
// leaves as it is; its resourceVersion where it has none.
func generation(o metav1.Object) string {
	if g := o.GetGeneration(); g > 0 {
		return strconv.FormatInt(g, 10)
	}
	return "rv:" + o.GetResourceVersion()
}

// NewSource returns an empty source; Run fills it.
func NewSource[P, B metav1.Object, C any](kind Kind[P, B, C]) *Source[P, B, C] {
	return &Source[P, B, C]{kind: kind, synced: make(chan struct{})}
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
	s.syncedOnce.Do(func() { close(s.synced) })
	return nil
}

// Set makes ps and bs the source's policies and bindings, as if its
// informers had listed them: for tests and benchmarks of a plugin without
// a server.
func (s *Source[P, B, C]) Set(ps []P, bs []B) {
	s.rebuild(ps, bs)
	s.syncedOnce.Do(func() { close(s.synced) })
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
	s.mu.RLock()
	oldPolicies, oldBindings := s.policies, s.bindings
	s.mu.RUnlock()
	bindings := make(versions[*Binding[B]], len(bs))
	byPolicy := map[string][]*Binding[B]{}
	for _, b := range bs {
		c := oldBindings.of(b, b.GetResourceVersion(), func() *Binding[B] {
			m, err := CompileMatch(s.kind.MatchResources(b))
			return &Binding[B]{Binding: b, match: m, err: err}
		})
		bindings[b.GetUID()] = c
		name := s.kind.PolicyName(b)
		byPolicy[name] = append(byPolicy[name], c.value)
	}
	policies := make(versions[C], len(ps))
	var bound []Bound[B, C]
	for _, p := range ps {
		c := oldPolicies.of(p, generation(p), func() C { return s.kind.Compile(p) })
		policies[p.GetUID()] = c
		if b := byPolicy[p.GetName()]; len(b) > 0 {
			bound = append(bound, Bound[B, C]{c.value, b})
		}
	}
	s.mu.Lock()
	s.bound, s.policies, s.bindings = bound, policies, bindings
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
