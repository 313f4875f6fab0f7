package ha

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
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
// would rewrite it). A watch that ends (a replica restarted under it and
// its watch cache no longer holds the revision asked for: 410, as kube's
// answers) is resumed from a new list, reconciled with what was seen: an
// object first seen in the list was added in the gap, one at a new
// resourceVersion was changed in it, one gone was deleted in it.
type effects struct {
	mu       sync.Mutex // guards counts, rv and restarts
	counts   map[string]map[watch.EventType]int
	rv       map[string]string // key -> last resourceVersion seen; "" once deleted
	restarts int
	stop     func()
}

// watchEffects starts the watches, each from a list's revision.
func watchEffects(ctx context.Context, c kubernetes.Interface) (*effects, error) {
	e := &effects{counts: map[string]map[watch.EventType]int{}, rv: map[string]string{}}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	e.stop = func() { cancel(); wg.Wait() }
	sas, cms := c.CoreV1().ServiceAccounts(""), c.CoreV1().ConfigMaps("")
	for _, kind := range []struct {
		name  string
		list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
		watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
	}{
		{perns.DefaultServiceAccount, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return sas.List(ctx, o)
		}, sas.Watch},
		{perns.RootCAConfigMap, func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cms.List(ctx, o)
		}, cms.Watch},
	} {
		selector := fields.OneTermEqualSelector("metadata.name", kind.name).String()
		// The first list must succeed here; later ones are retried.
		rv, err := e.relist(ctx, kind.name, selector, kind.list)
		if err != nil {
			e.stop()
			return nil, err
		}
		wg.Go(func() {
			for {
				e.follow(ctx, kind.name, rv, selector, kind.watch)
				if ctx.Err() != nil {
					return
				}
				e.mu.Lock()
				e.restarts++
				e.mu.Unlock()
				_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
					rv, err = e.relist(ctx, kind.name, selector, kind.list)
					return err == nil, nil
				})
			}
		})
	}
	return e, nil
}

// relist lists the objects called name and reconciles the list with what
// was seen; it returns the list's resourceVersion.
func (e *effects) relist(ctx context.Context, name, selector string, list func(context.Context, metav1.ListOptions) (runtime.Object, error)) (string, error) {
	obj, err := list(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		return "", err
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return "", err
	}
	listed := map[string]string{}
	for _, item := range items {
		if m, err := meta.Accessor(item); err == nil {
			listed[m.GetNamespace()+"/"+name] = m.GetResourceVersion()
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for key, rv := range listed {
		switch seen, ok := e.rv[key]; {
		case !ok || seen == "":
			e.countLocked(key, watch.Added, rv)
		case seen != rv:
			e.countLocked(key, watch.Modified, rv)
		}
	}
	for key, seen := range e.rv {
		if _, ok := listed[key]; !ok && seen != "" && strings.HasSuffix(key, "/"+name) {
			e.countLocked(key, watch.Deleted, "")
		}
	}
	m, err := meta.ListAccessor(obj)
	if err != nil {
		return "", err
	}
	return m.GetResourceVersion(), nil
}

// follow counts the events of a watch from rv until it ends.
func (e *effects) follow(ctx context.Context, name, rv, selector string, watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = selector
			return watchFn(ctx, o)
		},
	})
	if err != nil {
		return
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			if ev.Type == watch.Error {
				continue // the watcher ends after it
			}
			if m, err := meta.Accessor(ev.Object); err == nil {
				rv := m.GetResourceVersion()
				if ev.Type == watch.Deleted {
					rv = ""
				}
				e.mu.Lock()
				e.countLocked(m.GetNamespace()+"/"+name, ev.Type, rv)
				e.mu.Unlock()
			}
		}
	}
}

func (e *effects) countLocked(key string, t watch.EventType, rv string) {
	if e.counts[key] == nil {
		e.counts[key] = map[watch.EventType]int{}
	}
	e.counts[key][t]++
	e.rv[key] = rv
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

// resumed is how many times a watch ended and was resumed from a list.
func (e *effects) resumed() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.restarts
}
