package storagetest

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/capstan-io/capstan/storage"
)

// RunTestList checks GetList: predicates, single keys, paging with a
// consistent snapshot, remainingItemCount, the resourceVersion rules, bad
// continue tokens and reads of compacted revisions.
func RunTestList(ctx context.Context, t *testing.T, s storage.Interface, compact CompactFunc) {
	t.Run("all and filtered", func(t *testing.T) { testListFilter(ctx, t, s) })
	t.Run("single key", func(t *testing.T) { testListSingleKey(ctx, t, s) })
	t.Run("empty", func(t *testing.T) {
		list := mustList(ctx, t, s, "list-empty", storage.ListOptions{Recursive: true})
		if list.Items == nil || len(list.Items) != 0 {
			t.Fatalf("empty list has items %#v, want []", list.Items)
		}
		rvOf(t, list.ResourceVersion)
	})
	t.Run("pages", func(t *testing.T) { testListPages(ctx, t, s) })
	t.Run("filtered pages", func(t *testing.T) { testListFilteredPages(ctx, t, s) })
	t.Run("resourceVersion", func(t *testing.T) { testListResourceVersion(ctx, t, s) })
	t.Run("invalid continue", func(t *testing.T) { testListInvalidContinue(ctx, t, s) })
	t.Run("compacted", func(t *testing.T) { testListCompacted(ctx, t, s, compact) })
}

func list(ctx context.Context, s storage.Interface, ns string, opts storage.ListOptions) (*corev1.ConfigMapList, error) {
	out := &corev1.ConfigMapList{}
	err := s.GetList(ctx, nsKey(ns), opts, out)
	return out, err
}

func mustList(ctx context.Context, t *testing.T, s storage.Interface, ns string, opts storage.ListOptions) *corev1.ConfigMapList {
	t.Helper()
	out, err := list(ctx, s, ns, opts)
	if err != nil {
		t.Fatalf("GetList %s %+v: %v", ns, opts, err)
	}
	return out
}

func expectNames(t *testing.T, what string, l *corev1.ConfigMapList, want ...string) {
	t.Helper()
	if got := names(l.Items); !slices.Equal(got, want) {
		t.Fatalf("%s: got items %v, want %v", what, got, want)
	}
}

// populate creates objects named names in ns, labelled even=true/false by
// position, and returns them as stored.
func populate(ctx context.Context, t *testing.T, s storage.Interface, ns string, names ...string) []*corev1.ConfigMap {
	t.Helper()
	var out []*corev1.ConfigMap
	for i, n := range names {
		even := "false"
		if i%2 == 0 {
			even = "true"
		}
		out = append(out, create(ctx, t, s, configMap(ns, n, map[string]string{"even": even}, "k", n)))
	}
	return out
}

func testListFilter(ctx context.Context, t *testing.T, s storage.Interface) {
	stored := populate(ctx, t, s, "list", "a", "b", "c", "d", "e")
	populate(ctx, t, s, "list2", "z") // a namespace whose name extends "list"
	all := mustList(ctx, t, s, "list", storage.ListOptions{Recursive: true})
	expectNames(t, "all", all, "a", "b", "c", "d", "e")
	for i, it := range all.Items {
		if it.ResourceVersion != stored[i].ResourceVersion {
			t.Errorf("%s has resourceVersion %s, stored %s", it.Name, it.ResourceVersion, stored[i].ResourceVersion)
		}
	}
	if rvOf(t, all.ResourceVersion) < rvOf(t, stored[4].ResourceVersion) {
		t.Errorf("list resourceVersion %s older than its items", all.ResourceVersion)
	}
	if all.Continue != "" || all.RemainingItemCount != nil {
		t.Errorf("unpaged list has continue %q, remaining %v", all.Continue, all.RemainingItemCount)
	}
	even := mustList(ctx, t, s, "list", storage.ListOptions{Recursive: true, Predicate: labelPredicate(t, "even=true")})
	expectNames(t, "even=true", even, "a", "c", "e")
	byName := storage.SelectionPredicate{Field: fields.OneTermEqualSelector("metadata.name", "d"), GetAttrs: getAttrs}
	expectNames(t, "metadata.name=d", mustList(ctx, t, s, "list", storage.ListOptions{Recursive: true, Predicate: byName}), "d")
	resource := &corev1.ConfigMapList{}
	if err := s.GetList(ctx, ResourcePrefix, storage.ListOptions{Recursive: true}, resource); err != nil {
		t.Fatal(err)
	}
	if len(resource.Items) < 6 {
		t.Fatalf("list of every namespace has %d items, want at least 6", len(resource.Items))
	}
}

func testListSingleKey(ctx context.Context, t *testing.T, s storage.Interface) {
	populate(ctx, t, s, "list-one", "a", "ab")
	out := &corev1.ConfigMapList{}
	if err := s.GetList(ctx, key("list-one", "a"), storage.ListOptions{}, out); err != nil {
		t.Fatal(err)
	}
	expectNames(t, "single key", out, "a")
	if err := s.GetList(ctx, key("list-one", "missing"), storage.ListOptions{}, out); err != nil {
		t.Fatal(err)
	}
	expectNames(t, "missing single key", out)
}

// testListPages pages through a list while it changes: every page shows
// the state of the first.
func testListPages(ctx context.Context, t *testing.T, s storage.Interface) {
	populate(ctx, t, s, "list-pages", "a", "b", "c", "d", "e")
	opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2}}
	first := mustList(ctx, t, s, "list-pages", opts)
	expectNames(t, "page 1", first, "a", "b")
	expectRemaining(t, first, 3)

	// Changes between pages are not seen by the rest of the list.
	create(ctx, t, s, configMap("list-pages", "bb", nil))
	setData(ctx, t, s, "list-pages", "c", "k", "changed")
	remove(ctx, t, s, "list-pages", "d")

	opts.Predicate.Continue = first.Continue
	second := mustList(ctx, t, s, "list-pages", opts)
	expectNames(t, "page 2", second, "c", "d")
	expectRemaining(t, second, 1)
	if second.Items[0].Data["k"] != "c" {
		t.Errorf("page 2 shows a change made after page 1: %v", second.Items[0].Data)
	}
	if second.ResourceVersion != first.ResourceVersion {
		t.Errorf("page 2 at resourceVersion %s, page 1 at %s", second.ResourceVersion, first.ResourceVersion)
	}
	opts.Predicate.Continue = second.Continue
	third := mustList(ctx, t, s, "list-pages", opts)
	expectNames(t, "page 3", third, "e")
	if third.Continue != "" || third.RemainingItemCount != nil {
		t.Errorf("last page has continue %q, remaining %v", third.Continue, third.RemainingItemCount)
	}
}

func expectRemaining(t *testing.T, l *corev1.ConfigMapList, want int64) {
	t.Helper()
	if l.Continue == "" {
		t.Fatal("page has no continue token")
	}
	if l.RemainingItemCount == nil || *l.RemainingItemCount != want {
		t.Fatalf("remainingItemCount = %v, want %d", l.RemainingItemCount, want)
	}
}

// testListFilteredPages: a limit counts matching items, however many are
// filtered out; the remaining count is unknown.
func testListFilteredPages(ctx context.Context, t *testing.T, s storage.Interface) {
	populate(ctx, t, s, "list-fpages", "a", "b", "c", "d", "e", "f", "g")
	pred := labelPredicate(t, "even=true")
	pred.Limit = 2
	var got []string
	for page := 0; ; page++ {
		l := mustList(ctx, t, s, "list-fpages", storage.ListOptions{Recursive: true, Predicate: pred})
		if len(l.Items) > 2 || (l.Continue != "" && len(l.Items) != 2) {
			t.Fatalf("page %d has %v with continue %q", page, names(l.Items), l.Continue)
		}
		if l.RemainingItemCount != nil {
			t.Fatalf("filtered page has remainingItemCount %d", *l.RemainingItemCount)
		}
		got = append(got, names(l.Items)...)
		if l.Continue == "" {
			break
		}
		pred.Continue = l.Continue
	}
	if want := []string{"a", "c", "e", "g"}; !slices.Equal(got, want) {
		t.Fatalf("filtered pages gave %v, want %v", got, want)
	}
}
