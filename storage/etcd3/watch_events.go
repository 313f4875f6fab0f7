package etcd3

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/storage"
)

// transform turns an etcd event into the watch event the predicate lets
// through, if any. An update that moves an object into the selection is
// ADDED, one that moves it out is DELETED; a DELETED event carries the
// last state of the object at the revision of the change, as in kube.
func (w *watcher) transform(e *clientv3.Event) (watch.Event, bool, error) {
	key, rev := string(e.Kv.Key), e.Kv.ModRevision
	if e.Type == clientv3.EventTypeDelete {
		old, err := w.decodePrev(e, key, rev)
		if err != nil {
			return watch.Event{}, false, err
		}
		return watch.Event{Type: watch.Deleted, Object: old}, w.matches(old), nil
	}
	cur, err := w.s.decodeStored(w.ctx, e.Kv.Value, rev, key)
	if err != nil {
		return watch.Event{}, false, err
	}
	if e.IsCreate() {
		return watch.Event{Type: watch.Added, Object: cur}, w.matches(cur), nil
	}
	if w.pred.Empty() {
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	}
	old, err := w.decodePrev(e, key, rev)
	if err != nil {
		return watch.Event{}, false, err
	}
	curMatches, oldMatches := w.matches(cur), w.matches(old)
	switch {
	case curMatches && oldMatches:
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	case curMatches:
		return watch.Event{Type: watch.Added, Object: cur}, true, nil
	case oldMatches:
		return watch.Event{Type: watch.Deleted, Object: old}, true, nil
	}
	return watch.Event{}, false, nil
}

// decodePrev decodes the previous value of e with the revision of e.
func (w *watcher) decodePrev(e *clientv3.Event, key string, rev int64) (runtime.Object, error) {
	if e.PrevKv == nil {
		// etcd omits it only if the previous revision was compacted away.
		return nil, fmt.Errorf("etcd event for %q at revision %d has no previous value", key, rev)
	}
	return w.s.decodeStored(w.ctx, e.PrevKv.Value, rev, key)
}

// matches reports whether obj is selected; an object whose attributes
// cannot be read is not.
func (w *watcher) matches(obj runtime.Object) bool {
	ok, err := w.pred.Matches(obj)
	return err == nil && ok
}

// sendError sends err as a watch.Error event.
func (w *watcher) sendError(err error) {
	if errors.Is(err, context.Canceled) && w.ctx.Err() != nil {
		return // the watch was stopped: nobody listens
	}
	w.s.logger.Error("watch failed", "key", w.key, "err", err)
	w.sendStatus(errorStatus(err))
}

func (w *watcher) sendStatus(s *metav1.Status) { w.send(watch.Event{Type: watch.Error, Object: s}) }

// expiredStatus is the 410 of a watch from a compacted revision, with the
// message of kube's watch cache.
func expiredStatus(rev, compacted int64) *metav1.Status {
	s := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rev, compacted)).Status()
	return &s
}

// errorStatus is the Status a watch.Error event carries for err. The
// storage errors a watch can meet get kube's codes; others are a 500.
func errorStatus(err error) *metav1.Status {
	var se *storage.Error
	var s metav1.Status
	switch {
	case errors.As(err, &se) && errors.Is(err, storage.ErrExpired):
		s = apierrors.NewResourceExpired(se.Detail).Status()
	case errors.As(err, &se) && errors.Is(err, storage.ErrTooLargeResourceVersion):
		s = apierrors.NewTimeoutError(se.Detail, 1).Status()
		s.Details.Causes = []metav1.StatusCause{{
			Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version",
		}}
	default:
		s = apierrors.NewInternalError(err).Status()
	}
	return &s
}

// annotateInitialEventsEnd marks the bookmark that ends the initial events.
func annotateInitialEventsEnd(obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("annotating bookmark: %w", err)
	}
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[metav1.InitialEventsAnnotationKey] = "true"
	m.SetAnnotations(a)
	return nil
}
