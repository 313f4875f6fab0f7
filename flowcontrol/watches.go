package flowcontrol

import (
	"net/url"
	"sync"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/capstan-io/capstan/request"
)

// watchScope is what a watch watches: a resource, in a namespace or all
// of them, one object or all of them.
type watchScope struct {
	group, resource, namespace, name string
}

// watchTracker counts the watches being served, so that a write can be
// charged for the watchers it may have to notify (kube's watch tracker).
type watchTracker struct {
	mu     sync.Mutex
	counts map[watchScope]int
}

func newWatchTracker() *watchTracker {
	return &watchTracker{counts: map[watchScope]int{}}
}

// indexedFields are the field selectors that kube's watch cache serves
// from an index: a watch that selects one value of them only sees the
// events of its own objects (a kubelet's pods), so it is not counted.
var indexedFields = map[string]string{"pods": "spec.nodeName"}

// RegisterWatch counts a watch until the returned func is called.
func (c *Controller) RegisterWatch(info *request.Info, rawQuery string) (forget func()) {
	return c.watches.register(info, rawQuery)
}

func (t *watchTracker) register(info *request.Info, rawQuery string) func() {
	if info == nil || info.Verb != "watch" || indexed(info.Resource, rawQuery) {
		return func() {}
	}
	scope := watchScope{info.APIGroup, info.Resource, info.Namespace, info.Name}
	t.mu.Lock()
	t.counts[scope]++
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.counts[scope]--; t.counts[scope] <= 0 {
				delete(t.counts, scope)
			}
		})
	}
}

// indexed tells a watch that selects one value of its resource's indexed
// field. A query or selector that does not parse is not indexed.
func indexed(resource, rawQuery string) bool {
	field, ok := indexedFields[resource]
	if !ok {
		return false
	}
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return false
	}
	sel, err := fields.ParseSelector(query.Get("fieldSelector"))
	if err != nil {
		return false
	}
	value, ok := sel.RequiresExactMatch(field)
	return ok && value != ""
}

// interested counts the watches that may see an event of a write: those
// of the whole resource, of its namespace, and of the object itself.
func (t *watchTracker) interested(info *request.Info) int {
	scope := watchScope{group: info.APIGroup, resource: info.Resource}
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.counts[scope]
	if info.Namespace != "" {
		scope.namespace = info.Namespace
		n += t.counts[scope]
	}
	if info.Name != "" {
		scope.name = info.Name
		n += t.counts[scope]
	}
	return n
}
