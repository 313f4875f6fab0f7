package cache

import (
	"context"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// TestSelectByKeptAttrs: lists and watches whose predicate reads the
// resource's attributes select on those the cache kept, decoding only the
// objects they select, and answer as those that decode every object:
// an object whose labels change leaves (DELETED) and enters (ADDED) the
// selection.
func TestSelectByKeptAttrs(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{Attrs: cmAttrs})
	writes := 0
	setLabel := func(name, v string) *corev1.ConfigMap {
		t.Helper()
		writes++
		out := &corev1.ConfigMap{}
		err := c.GuaranteedUpdate(context.Background(), cmKey("kept", name), out, true, nil,
			func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
				cm := in.(*corev1.ConfigMap).DeepCopy()
				cm.Namespace, cm.Name = "kept", name
				cm.Data = map[string]string{"write": strconv.Itoa(writes)}
				if cm.Labels = nil; v != "" {
					cm.Labels = map[string]string{"sel": v}
				}
				return cm, nil, nil
			}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	setLabel("a", "yes")
	last := setLabel("b", "")
	waitForRV(t, c, rvOf(t, last.ResourceVersion))

	sel := labels.SelectorFromSet(labels.Set{"sel": "yes"})
	kept := storage.SelectionPredicate{Label: sel, GetAttrs: cmAttrs, ResourceAttrs: true}
	own := storage.SelectionPredicate{Label: sel, GetAttrs: cmAttrs}
	for _, pred := range []storage.SelectionPredicate{kept, own} {
		if got := itemNames(list(t, c, "/configmaps/kept", storage.ListOptions{ResourceVersion: "0", Predicate: pred}).Items); got != "a" {
			t.Errorf("list (kept attributes %v) = %s, want a", pred.ResourceAttrs, got)
		}
	}
	var ws []watch.Interface
	for _, pred := range []storage.SelectionPredicate{kept, own} {
		ws = append(ws, startWatch(t, c, "/configmaps/kept/", storage.ListOptions{Recursive: true, ResourceVersion: "0", Predicate: pred}))
	}
	for _, w := range ws {
		expectEvent(t, w, watch.Added, "a")
	}
	left := setLabel("a", "no")
	setLabel("b", "yes")
	setLabel("b", "yes") // stays in the selection
	setLabel("a", "")    // outside the selection before and after
	remove(t, c, "kept", "b")
	for i, w := range ws {
		if gone := expectEvent(t, w, watch.Deleted, "a"); gone.Labels["sel"] != "yes" || gone.ResourceVersion != left.ResourceVersion {
			t.Errorf("watch %d: DELETED on leaving carries %v at %s, want the last selected state at %s", i, gone.Labels, gone.ResourceVersion, left.ResourceVersion)
		}
		expectEvent(t, w, watch.Added, "b")
		expectEvent(t, w, watch.Modified, "b")
		expectEvent(t, w, watch.Deleted, "b")
	}
	for _, w := range ws {
		expectNoEvent(t, w)
	}
}

// TestKeptAttrsDecodeOnlySelected: a list whose selector matches nothing
// decodes nothing when it reads the kept attributes, and every object
// otherwise.
func TestKeptAttrsDecodeOnlySelected(t *testing.T) {
	// The decodings are held weakly: no collection may drop one before it
	// is looked for.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	c := newTestCacher(t, newTestStore(t), Config{Attrs: cmAttrs})
	waitForRV(t, c, rvOf(t, create(t, c, "dec", "a").ResourceVersion))
	decoded := func() bool {
		c.mu.RLock()
		e, _ := get(c.hist.latest(), cmKey("dec", "a"))
		c.mu.RUnlock()
		o, _ := e.read.load()
		return o != nil
	}
	sel := labels.SelectorFromSet(labels.Set{"app": "none"})
	list(t, c, "/configmaps/dec", storage.ListOptions{ResourceVersion: "0",
		Predicate: storage.SelectionPredicate{Label: sel, GetAttrs: cmAttrs, ResourceAttrs: true}})
	if decoded() {
		t.Error("a list selecting on kept attributes decoded an object it does not select")
	}
	own := storage.SelectionPredicate{Label: sel, GetAttrs: cmAttrs}
	list(t, c, "/configmaps/dec", storage.ListOptions{ResourceVersion: "0", Predicate: own})
	if !decoded() {
		t.Error("a list with an attribute function of its own did not read the object")
	}
}

func itemNames(items []corev1.ConfigMap) string {
	var out []string
	for _, it := range items {
		out = append(out, it.Name)
	}
	return strings.Join(out, ",")
}
