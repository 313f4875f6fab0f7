package cache

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

func listNames(l *corev1.ConfigMapList) []string {
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return out
}

// TestConsistentList: a list at resourceVersion "" sees every write made
// before it, to this resource or any other, and is served by the cache.
func TestConsistentList(t *testing.T) {
	s := &countingStorage{Store: newTestStore(t)}
	c := newTestCacher(t, s, Config{})
	other := newTestStore(t) // another resource on the same etcd
	lists := s.lists.Load()
	for i := range 30 {
		name := fmt.Sprintf("cm-%02d", i)
		created := create(t, c, "consistent", name)
		l := list(t, c, "/configmaps/consistent", storage.ListOptions{})
		if len(l.Items) != i+1 || l.Items[i].Name != name || l.Items[i].ResourceVersion != created.ResourceVersion {
			t.Fatalf("list after creating %s at %s: %v", name, created.ResourceVersion, listNames(l))
		}
		elsewhere := create(t, other, "elsewhere", name)
		l = list(t, c, "/configmaps/consistent", storage.ListOptions{})
		if rvOf(t, l.ResourceVersion) < rvOf(t, elsewhere.ResourceVersion) {
			t.Fatalf("list at %s, before a write elsewhere at %s", l.ResourceVersion, elsewhere.ResourceVersion)
		}
	}
	if n := s.lists.Load() - lists; n != 0 {
		t.Errorf("%d consistent lists went to the backend", n)
	}
}

// TestConsistentListFallback: when the cache cannot learn that it is
// current (the backend reports no progress), a consistent list is read
// from the backend rather than served stale.
func TestConsistentListFallback(t *testing.T) {
	c := newTestCacher(t, quietStorage{newTestStore(t)}, Config{})
	create(t, c, "fallback", "a")
	elsewhere := create(t, newTestStore(t), "elsewhere", "x")
	l := list(t, c, "/configmaps/fallback", storage.ListOptions{})
	if rvOf(t, l.ResourceVersion) < rvOf(t, elsewhere.ResourceVersion) || len(l.Items) != 1 {
		t.Fatalf("list at %s (%v), before a write elsewhere at %s", l.ResourceVersion, listNames(l), elsewhere.ResourceVersion)
	}
}

// TestPagesAcrossSnapshots pages through a list while it changes: every
// page shows the state of the first, continue tokens work across the cache
// and etcd3, and the cache reads the pages from its snapshots.
func TestPagesAcrossSnapshots(t *testing.T) {
	s := &countingStorage{Store: newTestStore(t)}
	c := newTestCacher(t, s, Config{})
	for i := range 10 {
		create(t, c, "pages", fmt.Sprintf("p%d", i), "k", "old")
	}
	waitForRV(t, c, rvOf(t, create(t, c, "pages-other", "x").ResourceVersion))
	lists := s.lists.Load()
	opts := storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 3}}
	first := list(t, c, "/configmaps/pages", opts)
	expectPage(t, first, first.ResourceVersion, 7, "p0", "p1", "p2")

	setData(t, c, "pages", "p3", "k", "new")
	remove(t, c, "pages", "p4")
	create(t, c, "pages", "p35")
	create(t, c, "pages", "p99")
	waitForRV(t, c, rvOf(t, create(t, c, "pages-other", "y").ResourceVersion))

	opts.Predicate.Continue = first.Continue
	second := list(t, c, "/configmaps/pages", opts)
	expectPage(t, second, first.ResourceVersion, 4, "p3", "p4", "p5")
	if second.Items[0].Data["k"] != "old" {
		t.Errorf("page 2 shows a change made after page 1")
	}
	if n := s.lists.Load() - lists; n != 0 {
		t.Errorf("%d pages went to the backend", n)
	}
	// The cache's token continues on etcd3, and etcd3's on the cache.
	opts.Predicate.Continue = second.Continue
	third := list(t, s.Store, "/configmaps/pages", opts)
	expectPage(t, third, first.ResourceVersion, 1, "p6", "p7", "p8")
	opts.Predicate.Continue = third.Continue
	last := list(t, c, "/configmaps/pages", opts)
	if !slices.Equal(listNames(last), []string{"p9"}) || last.Continue != "" || last.RemainingItemCount != nil {
		t.Fatalf("last page: %v, continue %q", listNames(last), last.Continue)
	}
	// The same pages from etcd3 at that revision.
	exact := list(t, s.Store, "/configmaps/pages", storage.ListOptions{ResourceVersion: first.ResourceVersion, ResourceVersionMatch: storage.MatchExact})
	if want := []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}; !slices.Equal(listNames(exact), want) {
		t.Fatalf("etcd3 at %s: %v", first.ResourceVersion, listNames(exact))
	}
}

func expectPage(t *testing.T, l *corev1.ConfigMapList, rv string, remaining int64, names ...string) {
	t.Helper()
	if !slices.Equal(listNames(l), names) || l.ResourceVersion != rv {
		t.Fatalf("page %v at %s, want %v at %s", listNames(l), l.ResourceVersion, names, rv)
	}
	if l.Continue == "" || l.RemainingItemCount == nil || *l.RemainingItemCount != remaining {
		t.Fatalf("page continue %q, remaining %v, want %d", l.Continue, l.RemainingItemCount, remaining)
	}
}

// TestResultsAreCopies: what the cache returns can be changed without
// changing the cache.
func TestResultsAreCopies(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{})
	w := startWatch(t, c, "/configmaps/copies", storage.ListOptions{Recursive: true, ResourceVersion: fmt.Sprint(cacheRV(c))})
	created := create(t, c, "copies", "a", "k", "v")
	waitForRV(t, c, rvOf(t, created.ResourceVersion))
	expectEvent(t, w, "ADDED", "a").Data["k"] = "changed by a watcher"
	got := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), cmKey("copies", "a"), storage.GetOptions{ResourceVersion: "0"}, got); err != nil {
		t.Fatal(err)
	}
	got.Data["k"] = "changed by a getter"
	l := list(t, c, "/configmaps/copies", storage.ListOptions{ResourceVersion: "0"})
	l.Items[0].Data["k"] = "changed by a lister"
	l = list(t, c, "/configmaps/copies", storage.ListOptions{ResourceVersion: "0"})
	if l.Items[0].Data["k"] != "v" {
		t.Fatalf("the cache holds %q", l.Items[0].Data["k"])
	}
}

// TestNotReady: until Run has filled it, the cache passes every call to
// the backend.
func TestNotReady(t *testing.T) {
	s := newTestStore(t)
	c, err := New(Config{Storage: s, NewFunc: func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} }, ResourcePrefix: "/configmaps"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Ready() || c.ReadinessCheck() == nil {
		t.Fatal("a cache that never ran is ready")
	}
	created := create(t, c, "notready", "a")
	for _, rv := range []string{"", "0"} {
		if l := list(t, c, "/configmaps/notready", storage.ListOptions{ResourceVersion: rv}); len(l.Items) != 1 {
			t.Fatalf("list at %q: %v", rv, listNames(l))
		}
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(t.Context(), cmKey("notready", "a"), storage.GetOptions{ResourceVersion: "0"}, got); err != nil || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("Get: %v, %+v", err, got)
	}
	w := startWatch(t, c, "/configmaps/notready", storage.ListOptions{Recursive: true})
	expectEvent(t, w, "ADDED", "a")
}

// TestListedItemsAreCopies: a caller may change what it listed (the
// registry defaults objects on read) without changing the cache, for
// typed and unstructured lists.
func TestListedItemsAreCopies(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{})
	create(t, c, "copies", "a", "k", "v")
	opts := storage.ListOptions{} // consistent: the list sees the create
	l := list(t, c, "/configmaps/copies", opts)
	l.Items[0].Data["k"] = "changed"
	l.Items[0].Labels = map[string]string{"changed": "true"}
	again := list(t, c, "/configmaps/copies", opts)
	if got := again.Items[0]; got.Data["k"] != "v" || got.Labels != nil {
		t.Fatalf("after changing a listed item, the cache lists data %v, labels %v", got.Data, got.Labels)
	}
}

// TestListedItemsShared: a list that asked for the cache's objects
// (the list handler's) gets items that share their maps with the cache,
// each item's struct its own; one that asked for copies, listed at the
// same time, may change its items without changing the shared ones.
func TestListedItemsShared(t *testing.T) {
	c := newTestCacher(t, newTestStore(t), Config{Codec: keptObjects})
	create(t, c, "shared", "a", "k", "v")
	create(t, c, "shared", "b", "k", "v")
	shared := storage.ListOptions{Recursive: true, Objects: storage.CachedObjects}
	first := list(t, c, "/configmaps/shared", shared)
	second := list(t, c, "/configmaps/shared", shared)
	if len(first.Items) != 2 || len(second.Items) != 2 {
		t.Fatalf("lists %v, %v", listNames(first), listNames(second))
	}
	for i := range first.Items {
		if !sameMap(first.Items[i].Data, second.Items[i].Data) {
			t.Fatalf("item %d: two shared lists hold two copies of its data", i)
		}
	}
	// Each shared item's struct is the list's: setting a field changes
	// that list only (the encoders set kinds on what they encode).
	first.Items[0].Name = "renamed"
	if second.Items[0].Name != "a" {
		t.Fatalf("renaming an item of one list renamed it in another: %q", second.Items[0].Name)
	}

	copied := list(t, c, "/configmaps/shared", storage.ListOptions{Recursive: true})
	if sameMap(copied.Items[0].Data, second.Items[0].Data) {
		t.Fatal("a list that asked for copies shares the cache's data")
	}
	copied.Items[0].Data["k"] = "changed"
	copied.Items[0].Labels = map[string]string{"changed": "true"}
	again := list(t, c, "/configmaps/shared", shared)
	if got := again.Items[0]; got.Data["k"] != "v" || got.Labels != nil || second.Items[0].Data["k"] != "v" {
		t.Fatalf("after changing a copied item, the cache lists data %v, labels %v", got.Data, got.Labels)
	}
}

// sameMap reports whether a and b are the same map, not equal ones.
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestSetItemsUnstructured: unstructured items are copied into an
// UnstructuredList, and an item of another type is an error.
func TestSetItemsUnstructured(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"n": "1"}}}
	u := &unstructured.UnstructuredList{}
	if err := (&Cacher{}).setItems(u, []*element{{key: "/a", obj: obj}}, storage.CopiedObjects); err != nil {
		t.Fatal(err)
	}
	if len(u.Items) != 1 || u.Items[0].GetName() != "a" {
		t.Fatalf("items %v", u.Items)
	}
	u.Items[0].Object["spec"].(map[string]any)["n"] = "2"
	if obj.Object["spec"].(map[string]any)["n"] != "1" {
		t.Fatal("changing the listed item changed the cached one")
	}
	if err := (&Cacher{}).setItems(&corev1.ConfigMapList{}, []*element{{key: "/a", obj: obj}}, storage.CopiedObjects); err == nil {
		t.Fatal("an Unstructured listed into a ConfigMapList: no error")
	}
}

// TestExactListsRebuilt: a list at any revision of the history, most of
// which the cache rebuilds from the nearest snapshot it kept, is the
// backend's list at that revision, whole and in pages.
func TestExactListsRebuilt(t *testing.T) {
	s := &countingStorage{Store: newTestStore(t)}
	c := newTestCacher(t, s, Config{})
	first := rvOf(t, create(t, c, "rebuilt", "first").ResourceVersion)
	exists := map[string]bool{}
	var last *corev1.ConfigMap
	for i := range 3 * checkpointEvery {
		name := fmt.Sprintf("r%02d", i%23)
		switch {
		case !exists[name]:
			last = create(t, c, "rebuilt", name, "n", fmt.Sprint(i))
		case i%7 == 3:
			remove(t, c, "rebuilt", name)
		default:
			last = setData(t, c, "rebuilt", name, "n", fmt.Sprint(i))
		}
		exists[name] = !exists[name] || i%7 != 3
	}
	final := rvOf(t, setData(t, c, "rebuilt", last.Name, "n", "final").ResourceVersion)
	waitForRV(t, c, final)
	lists := s.lists.Load()
	for rv := final; rv >= first; rv-- {
		at := storage.ListOptions{ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: storage.MatchExact}
		want := list(t, s.Store, "/configmaps/rebuilt", at)
		if got := list(t, c, "/configmaps/rebuilt", at); !reflect.DeepEqual(got.Items, want.Items) || got.ResourceVersion != want.ResourceVersion {
			t.Fatalf("list at %d: %v, want %v", rv, listNames(got), listNames(want))
		}
		// Legacy paging at rv, in pages of 4.
		paged := storage.ListOptions{ResourceVersion: fmt.Sprint(rv), Predicate: storage.SelectionPredicate{Limit: 4}}
		var items []corev1.ConfigMap
		for {
			l := list(t, c, "/configmaps/rebuilt", paged)
			items = append(items, l.Items...)
			if l.Continue == "" {
				break
			}
			paged.Predicate.Continue = l.Continue
		}
		if !reflect.DeepEqual(items, want.Items) {
			t.Fatalf("pages at %d: %v, want %v", rv, len(items), listNames(want))
		}
	}
	if n := s.lists.Load() - lists; n != 0 {
		t.Errorf("%d exact lists went to the backend", n)
	}
}
