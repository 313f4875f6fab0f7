package etcd3

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/storage"
)

// resultBuffer is how many events wait for a slow consumer before the
// watch stops reading from etcd.
const resultBuffer = 100

// watcher is one Watch: a goroutine that (optionally) lists the current
// state, then turns etcd watch responses into watch events.
type watcher struct {
	s              *Store
	ctx            context.Context
	cancel         context.CancelFunc
	key, etcdKey   string
	recursive      bool
	pred           storage.SelectionPredicate
	progressNotify bool
	recordTimes    bool // changes come as *storage.TimedObject
	result         chan watch.Event
}

var _ watch.Interface = (*watcher)(nil)

// Watch streams the changes under key. See storage.ListOptions: "" and "0"
// start with an ADDED event per existing object (unless SendInitialEvents
// is false), N with the changes after revision N. SendInitialEvents=true
// with ProgressNotify ends the initial events with a BOOKMARK annotated
// k8s.io/initial-events-end. Errors after the start, such as a compacted
// revision (410), arrive as one watch.Error event before the channel closes.
func (s *Store) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	etcdKey, err := s.keys.etcdKey(key, opts.Recursive)
	if err != nil {
		return nil, err
	}
	rv, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	rev := int64(rv)
	sendInitial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	initialEvents := sendInitial || (opts.SendInitialEvents == nil && rev == 0)
	if rev == 0 && !initialEvents {
		// Only the changes from now on.
		if rev, err = s.currentRevision(ctx); err != nil {
			return nil, err
		}
	}
	// Require a leader so that a member cut off from its cluster ends the
	// watch instead of silently delivering nothing.
	wctx, cancel := context.WithCancel(watchContext(ctx))
	w := &watcher{
		s: s, ctx: wctx, cancel: cancel,
		key: key, etcdKey: etcdKey, recursive: opts.Recursive,
		pred: opts.Predicate, progressNotify: opts.ProgressNotify, recordTimes: opts.RecordTimes,
		result: make(chan watch.Event, resultBuffer),
	}
	// The initial events end with a bookmark only for a client that takes
	// bookmarks, as in kube.
	go w.run(rev, initialEvents, sendInitial && opts.ProgressNotify)
	// As kube's, a watch served from etcd does not know when it caught
	// up: its seats are given back at once.
	storage.WatchInitialized(ctx)
	return w, nil
}

// Stop ends the watch; the result channel closes soon after.
func (w *watcher) Stop() { w.cancel() }

// ResultChan returns the events. It is closed when the watch ends.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

func (w *watcher) run(rev int64, initialEvents, endBookmark bool) {
	defer close(w.result)
	defer w.cancel()
	if initialEvents {
		if rev > 0 {
			current, err := w.s.currentRevision(w.ctx)
			if err != nil {
				w.sendError(err)
				return
			}
			if rev > current {
				w.sendError(tooLarge(w.key, uint64(rev), current))
				return
			}
		}
		listRev, ok := w.sendInitialEvents()
		if !ok {
			return
		}
		rev = listRev
		if endBookmark && !w.sendBookmark(rev, true) {
			return
		}
	}
	w.stream(rev)
}

// send delivers e unless the watch is stopped first.
func (w *watcher) send(e watch.Event) bool {
	select {
	case w.result <- e:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// sendInitialEvents sends an ADDED event for every matching object of the
// latest state, read in pages at one revision, and returns that revision.
func (w *watcher) sendInitialEvents() (int64, bool) {
	var rev int64
	start := w.etcdKey
	for {
		resp, err := w.s.client.Get(w.ctx, start, listOptions(w.etcdKey, w.recursive, rev, maxPageSize)...)
		if err != nil {
			w.sendError(w.s.listError(w.ctx, err, w.key, w.etcdKey, start, rev, false))
			return 0, false
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		w.s.sizes.observe(resp.Kvs...)
		for _, kv := range resp.Kvs {
			obj, err := w.s.decodeStored(w.ctx, kv.Value, kv.ModRevision, string(kv.Key))
			if err != nil {
				w.sendError(err)
				return 0, false
			}
			if w.matches(obj) && !w.send(watch.Event{Type: watch.Added, Object: obj}) {
				return 0, false
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, true
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// sendBookmark sends a BOOKMARK: an empty object carrying revision rev.
func (w *watcher) sendBookmark(rev int64, initialEventsEnd bool) bool {
	obj := w.s.newFunc()
	if err := setResourceVersion(obj, rev); err != nil {
		w.sendError(err)
		return false
	}
	if initialEventsEnd {
		if err := annotateInitialEventsEnd(obj); err != nil {
			w.sendError(err)
			return false
		}
	}
	return w.send(watch.Event{Type: watch.Bookmark, Object: obj})
}

// stream watches etcd from revision rev+1 and sends what it sees.
func (w *watcher) stream(rev int64) {
	opts := []clientv3.OpOption{clientv3.WithRev(rev + 1), clientv3.WithPrevKV()}
	if w.recursive {
		opts = append(opts, clientv3.WithPrefix())
	}
	if w.progressNotify {
		opts = append(opts, clientv3.WithProgressNotify())
	}
	for resp := range w.s.client.Watch(w.ctx, w.etcdKey, opts...) {
		if err := resp.Err(); err != nil {
			if resp.CompactRevision != 0 || isCompacted(err) {
				w.sendStatus(expiredStatus(rev, resp.CompactRevision))
			} else if w.ctx.Err() == nil {
				w.sendError(fmt.Errorf("watch of %q: %w", w.key, err))
			}
			return
		}
		if resp.IsProgressNotify() {
			metrics.EtcdBookmark(w.s.groupResource.Group, w.s.groupResource.Resource)
			if w.progressNotify && !w.sendBookmark(resp.Header.Revision, false) {
				return
			}
			continue
		}
		for _, e := range resp.Events {
			metrics.StorageEvent(w.s.groupResource.Group, w.s.groupResource.Resource)
			if e.Type == clientv3.EventTypeDelete {
				w.s.sizes.deleted(e.Kv)
			} else {
				w.s.sizes.observe(e.Kv)
			}
			ev, ok, err := w.transform(e)
			if err != nil {
				w.sendError(err)
				return
			}
			if !ok {
				continue
			}
			if w.recordTimes {
				ev.Object = &storage.TimedObject{Object: ev.Object, Decoded: time.Now()}
			}
			if !w.send(ev) {
				return
			}
		}
	}
	// The etcd channel closes when the watch is stopped or the client is
	// closed; either way the watch is over.
}
