package storagetest

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// RunTestWatch checks Watch: events after a revision, initial events and
// their end bookmark, predicate transitions, single keys, progress
// bookmarks, compacted revisions and stopping. Progress bookmarks need a
// backend that sends them within a few seconds.
func RunTestWatch(ctx context.Context, t *testing.T, s storage.Interface, compact CompactFunc) {
	t.Run("from resourceVersion", func(t *testing.T) { testWatchFromRV(ctx, t, s) })
	t.Run("initial events", func(t *testing.T) { testWatchInitialEvents(ctx, t, s) })
	t.Run("send initial events", func(t *testing.T) { testWatchSendInitialEvents(ctx, t, s) })
	t.Run("no initial events", func(t *testing.T) {
		populate(ctx, t, s, "watch-noinitial", "a")
		no := false
		w := startWatch(ctx, t, s, nsKey("watch-noinitial"), storage.ListOptions{Recursive: true, SendInitialEvents: &no})
		create(ctx, t, s, configMap("watch-noinitial", "b", nil))
		expectEvent(t, w, watch.Added, "b")
	})
	t.Run("predicate", func(t *testing.T) { testWatchPredicate(ctx, t, s) })
	t.Run("single key", func(t *testing.T) { testWatchSingleKey(ctx, t, s) })
	t.Run("progress bookmarks", func(t *testing.T) {
		w := startWatch(ctx, t, s, nsKey("watch-progress"), storage.ListOptions{
			Recursive: true, ResourceVersion: rvString(currentRV(ctx, t, s)), ProgressNotify: true})
		// A write the watch does not select moves the revision on; the
		// bookmark tells the watcher it has seen everything up to there.
		other := create(ctx, t, s, configMap("watch-progress-other", "a", nil))
		if got, want := expectBookmark(t, w, false), rvOf(t, other.ResourceVersion); got < want {
			t.Fatalf("bookmark at %d, before the unrelated write at %d", got, want)
		}
	})
	t.Run("compacted", func(t *testing.T) { testWatchCompacted(ctx, t, s, compact) })
	t.Run("stop", func(t *testing.T) {
		w := startWatch(ctx, t, s, nsKey("watch-stop"), storage.ListOptions{Recursive: true})
		w.Stop()
		w.Stop() // twice is fine
		expectClosed(t, w)
	})
	t.Run("context cancelled", func(t *testing.T) {
		wctx, cancel := context.WithCancel(ctx)
		w := startWatch(wctx, t, s, nsKey("watch-cancel"), storage.ListOptions{Recursive: true})
		cancel()
		expectClosed(t, w)
	})
}

func testWatchFromRV(ctx context.Context, t *testing.T, s storage.Interface) {
	stored := create(ctx, t, s, configMap("watch-rv", "a", nil, "k", "v1"))
	w := startWatch(ctx, t, s, nsKey("watch-rv"), storage.ListOptions{Recursive: true, ResourceVersion: stored.ResourceVersion})
	updated := setData(ctx, t, s, "watch-rv", "a", "k", "v2")
	if got := expectEvent(t, w, watch.Modified, "a"); got.ResourceVersion != updated.ResourceVersion || got.Data["k"] != "v2" {
		t.Fatalf("MODIFIED carries %+v, want %+v", got, updated)
	}
	create(ctx, t, s, configMap("watch-rv", "b", nil))
	expectEvent(t, w, watch.Added, "b")
	deleted := remove(ctx, t, s, "watch-rv", "a")
	got := expectEvent(t, w, watch.Deleted, "a")
	if got.ResourceVersion != deleted.ResourceVersion || got.Data["k"] != "v2" {
		t.Fatalf("DELETED carries %+v, want the last state at the deletion's revision %+v", got, deleted)
	}
	expectNoEvent(t, w)
}

func testWatchInitialEvents(ctx context.Context, t *testing.T, s storage.Interface) {
	populate(ctx, t, s, "watch-initial", "a", "b")
	for _, rv := range []string{"", "0"} {
		w := startWatch(ctx, t, s, nsKey("watch-initial"), storage.ListOptions{Recursive: true, ResourceVersion: rv})
		expectEvent(t, w, watch.Added, "a")
		expectEvent(t, w, watch.Added, "b")
		expectNoEvent(t, w)
		w.Stop()
	}
	w := startWatch(ctx, t, s, nsKey("watch-initial"), storage.ListOptions{Recursive: true})
	expectEvent(t, w, watch.Added, "a")
	expectEvent(t, w, watch.Added, "b")
	setData(ctx, t, s, "watch-initial", "a", "k", "new")
	expectEvent(t, w, watch.Modified, "a")
}

func testWatchSendInitialEvents(ctx context.Context, t *testing.T, s storage.Interface) {
	stored := populate(ctx, t, s, "watch-sendinitial", "a", "b", "c")
	yes := true
	w := startWatch(ctx, t, s, nsKey("watch-sendinitial"), storage.ListOptions{
		Recursive: true, SendInitialEvents: &yes, ProgressNotify: true, Predicate: labelPredicate(t, "even=true")})
	expectEvent(t, w, watch.Added, "a")
	expectEvent(t, w, watch.Added, "c")
	if rv := expectBookmark(t, w, true); rv < rvOf(t, stored[2].ResourceVersion) {
		t.Fatalf("initial-events-end bookmark at %d, before the last object %s", rv, stored[2].ResourceVersion)
	}
	create(ctx, t, s, configMap("watch-sendinitial", "d", map[string]string{"even": "true"}))
	expectEvent(t, w, watch.Added, "d")
}

// testWatchPredicate: an object entering the selection is ADDED, one
// leaving it DELETED (with its last selected state at the revision of the
// change), and changes outside the selection are not seen.
func testWatchPredicate(ctx context.Context, t *testing.T, s storage.Interface) {
	ns := "watch-pred"
	w := startWatch(ctx, t, s, nsKey(ns), storage.ListOptions{
		Recursive: true, ResourceVersion: rvString(currentRV(ctx, t, s)), Predicate: labelPredicate(t, "sel=yes")})
	setLabel := func(v string) *corev1.ConfigMap {
		return update(ctx, t, s, ns, "x", func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"sel": v} })
	}
	create(ctx, t, s, configMap(ns, "x", map[string]string{"sel": "yes"}))
	expectEvent(t, w, watch.Added, "x")
	left := setLabel("no")
	got := expectEvent(t, w, watch.Deleted, "x")
	if got.ResourceVersion != left.ResourceVersion || got.Labels["sel"] != "yes" {
		t.Fatalf("DELETED on leaving the selection carries %+v", got.ObjectMeta)
	}
	setData(ctx, t, s, ns, "x", "k", "unseen")
	setLabel("yes")
	expectEvent(t, w, watch.Added, "x")
	setData(ctx, t, s, ns, "x", "k", "seen")
	expectEvent(t, w, watch.Modified, "x")
	create(ctx, t, s, configMap(ns, "y", map[string]string{"sel": "no"}))
	remove(ctx, t, s, ns, "y")
	remove(ctx, t, s, ns, "x")
	expectEvent(t, w, watch.Deleted, "x")
	expectNoEvent(t, w)
}

func testWatchSingleKey(ctx context.Context, t *testing.T, s storage.Interface) {
	ns := "watch-one"
	populate(ctx, t, s, ns, "a", "ab", "b")
	w := startWatch(ctx, t, s, key(ns, "a"), storage.ListOptions{ResourceVersion: rvString(currentRV(ctx, t, s))})
	setData(ctx, t, s, ns, "ab", "k", "x")
	setData(ctx, t, s, ns, "b", "k", "x")
	setData(ctx, t, s, ns, "a", "k", "x")
	expectEvent(t, w, watch.Modified, "a")
	expectNoEvent(t, w)
}

// testWatchCompacted watches from a compacted revision: one 410 Expired
// error event, then the channel closes.
func testWatchCompacted(ctx context.Context, t *testing.T, s storage.Interface, compact CompactFunc) {
	stored := create(ctx, t, s, configMap("watch-compact", "a", nil))
	setData(ctx, t, s, "watch-compact", "a", "k", "1")
	setData(ctx, t, s, "watch-compact", "a", "k", "2")
	if err := compact(ctx, currentRV(ctx, t, s)); err != nil {
		t.Fatalf("compact: %v", err)
	}
	w, err := s.Watch(ctx, nsKey("watch-compact"), storage.ListOptions{Recursive: true, ResourceVersion: stored.ResourceVersion})
	if err != nil {
		// Refusing the watch at once is as good as an error event.
		expectErr(t, "Watch from a compacted revision", err, storage.ErrExpired)
		return
	}
	defer w.Stop()
	e := nextEvent(t, w)
	status, ok := e.Object.(*metav1.Status)
	if e.Type != watch.Error || !ok {
		t.Fatalf("got %s %T, want an ERROR event with a Status", e.Type, e.Object)
	}
	if status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired {
		t.Fatalf("got status %d %s %q, want 410 Expired", status.Code, status.Reason, status.Message)
	}
	expectClosed(t, w)
}
