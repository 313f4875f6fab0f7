package cache

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/capstan-io/capstan/storage"
)

func expectBookmark(t *testing.T, w watch.Interface) uint64 {
	t.Helper()
	e := nextEvent(t, w)
	cm, ok := e.Object.(*corev1.ConfigMap)
	if e.Type != watch.Bookmark || !ok {
		t.Fatalf("got %s %+v, want a BOOKMARK", e.Type, e.Object)
	}
	return rvOf(t, cm.ResourceVersion)
}

// TestPeriodicBookmarks: without progress from the backend, a watcher
// that asked for bookmarks gets one a minute after the last, if its
// revision moved on.
func TestPeriodicBookmarks(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	c := newTestCacher(t, quietStorage{newTestStore(t)}, Config{Clock: clk})
	w := startWatch(t, c, "/configmaps/bm", storage.ListOptions{
		Recursive: true, ResourceVersion: fmt.Sprint(cacheRV(c)), ProgressNotify: true})
	other := rvOf(t, create(t, c, "bm-other", "a").ResourceVersion)
	waitForRV(t, c, other)

	clk.Step(59 * time.Second)
	expectNoEvent(t, w)
	clk.Step(2 * time.Second)
	if rv := expectBookmark(t, w); rv < other {
		t.Fatalf("bookmark at %d, before the write at %d", rv, other)
	}
	// Nothing moved: no bookmark.
	clk.Step(61 * time.Second)
	expectNoEvent(t, w)
	other = rvOf(t, create(t, c, "bm-other", "b").ResourceVersion)
	waitForRV(t, c, other)
	clk.Step(61 * time.Second)
	if rv := expectBookmark(t, w); rv < other {
		t.Fatalf("bookmark at %d, before the write at %d", rv, other)
	}
	// A watcher that did not ask gets none.
	quiet := startWatch(t, c, "/configmaps/bm", storage.ListOptions{
		Recursive: true, ResourceVersion: fmt.Sprint(cacheRV(c))})
	waitForRV(t, c, rvOf(t, create(t, c, "bm-other", "c").ResourceVersion))
	clk.Step(61 * time.Second)
	expectNoEvent(t, quiet)
}

// TestProgressBookmarks: a progress notification from the backend sends a
// bookmark to the watchers behind it right away, then at most every
// progressBookmarkInterval.
func TestProgressBookmarks(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Now())
	c := newTestCacher(t, newTestStore(t), Config{Clock: clk})
	w := startWatch(t, c, "/configmaps/pbm", storage.ListOptions{
		Recursive: true, ResourceVersion: fmt.Sprint(cacheRV(c)), ProgressNotify: true})
	elsewhere := newTestStore(t)
	// etcd reports progress every 200ms in these tests.
	rv := rvOf(t, create(t, elsewhere, "pbm", "a").ResourceVersion)
	if got := expectBookmark(t, w); got < rv {
		t.Fatalf("bookmark at %d, before the write at %d", got, rv)
	}
	rv = rvOf(t, create(t, elsewhere, "pbm", "b").ResourceVersion)
	waitForRV(t, c, rv)
	expectNoEvent(t, w)
	clk.Step(progressBookmarkInterval)
	if got := expectBookmark(t, w); got < rv {
		t.Fatalf("bookmark at %d, before the write at %d", got, rv)
	}
}
