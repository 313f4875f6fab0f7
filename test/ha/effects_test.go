package ha

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/capstan-io/capstan/controlplane/controllers/perns"
)

// effects counts the events of what the elected per-namespace loops
// (serviceaccount, root-ca-cert-publisher) create in every namespace, by
// namespace, through watches that resume where they left off: each new
// namespace must get its default ServiceAccount and its kube-root-ca.crt
// once, whichever replica leads and however often leadership moved, and
// neither may change afterwards (two publishers with different views
// would rewrite it).
type effects struct {
	mu     sync.Mutex // guards counts
	counts map[string]map[watch.EventType]int
	stop   func()
}

// watchEffects starts the watches, from a list's revision.
func watchEffects(ctx context.Context, c kubernetes.Interface) (*effects, error) {
	e := &effects{counts: map[string]map[watch.EventType]int{}}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	e.stop = func() { cancel(); wg.Wait() }
	sas, cms := c.CoreV1().ServiceAccounts(""), c.CoreV1().ConfigMaps("")
	for _, kind := range []struct {
		name  string
		list  func(context.Context, metav1.ListOptions) (string, error)
		watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
	}{
		{perns.DefaultServiceAccount, func(ctx context.Context, o metav1.ListOptions) (string, error) {
			l, err := sas.List(ctx, o)
			if err != nil {
				return "", err
			}
			return l.ResourceVersion, nil
		}, sas.Watch},
		{perns.RootCAConfigMap, func(ctx context.Context, o metav1.ListOptions) (string, error) {
			l, err := cms.List(ctx, o)
			if err != nil {
				return "", err
			}
			return l.ResourceVersion, nil
		}, cms.Watch},
	} {
		selector := fields.OneTermEqualSelector("metadata.name", kind.name).String()
		rv, err := kind.list(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			e.stop()
			return nil, err
		}
		w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.FieldSelector = selector
				return kind.watch(ctx, o)
			},
		})
		if err != nil {
			e.stop()
			return nil, err
		}
		wg.Go(func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					if m, err := meta.Accessor(ev.Object); err == nil {
						e.count(m.GetNamespace()+"/"+kind.name, ev.Type)
					}
				}
			}
		})
	}
	return e, nil
}

func (e *effects) count(key string, t watch.EventType) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts[key] == nil {
		e.counts[key] = map[watch.EventType]int{}
	}
	e.counts[key][t]++
}

// created reports whether both objects of namespace ns have arrived.
func (e *effects) created(ns string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.counts[ns+"/"+perns.DefaultServiceAccount][watch.Added] > 0 && e.counts[ns+"/"+perns.RootCAConfigMap][watch.Added] > 0
}

// problems lists, for namespace ns, every object not created exactly once
// or changed since.
func (e *effects) problems(ns string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, name := range []string{perns.DefaultServiceAccount, perns.RootCAConfigMap} {
		c := e.counts[ns+"/"+name]
		if c[watch.Added] != 1 || c[watch.Modified] != 0 || c[watch.Deleted] != 0 {
			out = append(out, fmt.Sprintf("%s/%s: %d added, %d modified, %d deleted, want added once", ns, name,
				c[watch.Added], c[watch.Modified], c[watch.Deleted]))
		}
	}
	return out
}
