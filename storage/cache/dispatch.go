package cache

import (
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

const (
	// bookmarkFrequency is how often a watcher that asked for bookmarks
	// gets one when its revision moved on (kube's minute).
	bookmarkFrequency = time.Minute
	// progressBookmarkInterval is how soon after its last bookmark a
	// watcher gets another when the backend reports progress: bookmarks
	// follow the backend's progress notifications, at most this often.
	progressBookmarkInterval = 5 * time.Second
	// deadlineBookmarkLead is how long before its deadline a watch gets a
	// last bookmark, so that its client resumes from a recent revision.
	deadlineBookmarkLead = 2 * time.Second
	// progressScanInterval: see progressed.
	progressScanInterval = 250 * time.Millisecond
)

// dispatch hands ev to its watchers. Those with no room for it get the
// time the budget allows to make room; a watcher that does not is closed,
// as kube's cacher does: its client sees the result channel close and
// watches again from its last revision. Run's goroutine only.
func (c *Cacher) dispatch(ev *event, targets []*cacheWatcher) {
	var blocked []*cacheWatcher
	for _, w := range targets {
		if !w.offer(ev, nil) {
			blocked = append(blocked, w)
		}
	}
	if len(blocked) == 0 {
		return
	}
	budget := c.run.budget.take()
	if budget <= 0 {
		c.closeBlocked(ev, blocked)
		return
	}
	start := c.clock.Now()
	timer := c.clock.NewTimer(budget)
	defer timer.Stop()
	for i, w := range blocked {
		if !w.offer(ev, timer.C()) {
			c.closeBlocked(ev, blocked[i:])
			return // the budget is spent
		}
	}
	c.run.budget.giveBack(budget - c.clock.Since(start))
}

// closeBlocked closes the watchers that still have no room for ev.
func (c *Cacher) closeBlocked(ev *event, blocked []*cacheWatcher) {
	for _, w := range blocked {
		if !w.offer(ev, nil) {
			w.closeSlow()
		}
	}
}

// tick does the periodic work: forget old history, follow the backend's
// compactions, and send the bookmarks that are due.
func (c *Cacher) tick() {
	now := c.clock.Now()
	c.mu.Lock()
	c.hist.evict(now)
	if c.backend.compactions != nil {
		if rev := c.backend.compactions.CompactRevision(); rev > 0 {
			c.hist.compact(uint64(rev), c.rv)
		}
	}
	targets, bm := c.dueBookmarksLocked(now)
	c.mu.Unlock()
	sendBookmarks(targets, bm)
}

// progressed moves the cache to revision rv, which the backend reported
// as complete, and sends the bookmarks that are due: the watchers whose
// revision is behind the cache's learn that nothing they select changed.
// Progress comes often (every read that waits asks for it), so the
// watchers are scanned at most every progressScanInterval; the next tick
// picks up what that leaves.
func (c *Cacher) progressed(rv uint64) {
	now := c.clock.Now()
	c.mu.Lock()
	if rv > c.rv {
		c.setRVLocked(rv)
	}
	c.progressScan.seq++
	if now.Sub(c.progressScan.last) < progressScanInterval {
		c.mu.Unlock()
		return
	}
	c.progressScan.last = now
	targets, bm := c.dueBookmarksLocked(now)
	c.mu.Unlock()
	sendBookmarks(targets, bm)
}

// dueBookmarksLocked returns the watchers due a bookmark at the cache's
// revision, and that bookmark. A watcher is due one if the revision moved
// since its last, and a minute has passed, or the backend reported
// progress since (at most every progressBookmarkInterval), or its deadline
// is near.
func (c *Cacher) dueBookmarksLocked(now time.Time) ([]*cacheWatcher, *event) {
	var due []*cacheWatcher
	for w := range c.watchers.bookmarks {
		if c.rv <= w.marks.bookmarkRV {
			continue
		}
		since := now.Sub(w.marks.lastBookmark)
		progress := c.progressScan.seq > w.marks.progressSeen && (!w.marks.bookmarked || since >= progressBookmarkInterval)
		deadline := !w.deadline.IsZero() && !w.marks.deadlineMarked && !now.Before(w.deadline.Add(-deadlineBookmarkLead))
		if !progress && !deadline && since < bookmarkFrequency {
			continue
		}
		w.marks.lastBookmark, w.marks.bookmarked, w.marks.bookmarkRV, w.marks.progressSeen = now, true, c.rv, c.progressScan.seq
		w.marks.deadlineMarked = w.marks.deadlineMarked || deadline
		due = append(due, w)
	}
	return due, &event{typ: watch.Bookmark, rv: c.rv}
}

// sendBookmarks hands bm to each watcher that has room: a bookmark is
// never worth closing a watcher for.
func sendBookmarks(targets []*cacheWatcher, bm *event) {
	for _, w := range targets {
		w.offer(bm, nil)
	}
}
