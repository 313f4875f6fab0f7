package handlers

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/endpoints/wire"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// serveWatch streams watch events until the client goes, the storage ends
// the watch, or the watch's time is up.
func (s *Scope) serveWatch(w http.ResponseWriter, r *http.Request, opts *rest.ListOptions) {
	watcher, ok := s.Storage.(rest.Watcher)
	if !ok {
		s.writeError(w, r, MethodNotSupported(s.GroupResource(), "watch"))
		return
	}
	out, err := negotiateOutput(r, s.Serializer, s.watchShapes())
	if err == nil && out.info.StreamSerializer == nil {
		err = notAcceptableStream(s.Serializer.SupportedMediaTypes())
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.watchTimeout(opts))
	defer cancel()
	// Events may come as objects shared with other watches: streamEvents
	// encodes them without changing them, or unwraps a copy.
	opts.Objects = storage.EncodedObjects
	wi, err := watcher.Watch(ctx, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer wi.Stop()
	if wsstream.IsWebSocketRequest(r) {
		s.streamEventsWebSocket(ctx, w, r, out, wi)
		return
	}
	s.streamEvents(ctx, w, r, out, wi)
}

func (s *Scope) watchTimeout(opts *rest.ListOptions) time.Duration {
	// A negative timeout ends the watch at once, as kube's does; only zero
	// (or none) means the server's own.
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds != 0 {
		return time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	min := s.MinRequestTimeout
	if min <= 0 {
		min = 30 * time.Minute
	}
	return min + time.Duration(rand.Int64N(int64(min)))
}

// watchContentType is the Content-Type of a watch stream: JSON streams keep
// their media type, others say they are a stream, as kube's do.
func watchContentType(info runtime.SerializerInfo) string {
	if info.MediaType == runtime.ContentTypeJSON {
		return info.MediaType
	}
	return info.MediaType + ";stream=watch"
}

func (s *Scope) streamEvents(ctx context.Context, w http.ResponseWriter, r *http.Request, out output, wi watch.Interface) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", watchContentType(out.info))
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	// While a backlog waits (the initial events of a WatchList, a burst
	// of changes), events are written together; the stream is flushed
	// whenever it has caught up.
	batch := &wire.BatchWriter{W: w}
	defer batch.Close()
	events := newWatchEncoder(s, r, out, batch)
	sent := metrics.Watch(s.Resource.Group, s.Resource.Version, s.Resource.Resource)
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			if len(wi.ResultChan()) >= wire.Backlog {
				batch.Gather()
			}
			before := batch.Written
			if err := events.write(batch, ev); err != nil {
				return
			}
			sent.Sent(batch.Written - before)
			if len(wi.ResultChan()) == 0 {
				if batch.Close() != nil {
					return
				}
				_ = rc.Flush()
			}
			if initialEventsEnd(ev) {
				metrics.WatchListSent(r.Context())
			}
		}
	}
}

// WatchOne serves the legacy /watch/<resource>/<name> path and
// ?watch=true on an object: a watch of the collection narrowed to one name.
func (s *Scope) WatchOne(w http.ResponseWriter, r *http.Request, name string) {
	opts, err := s.listOptions(r, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	opts.FieldSelector = fields.AndSelectors(opts.FieldSelector, fields.OneTermEqualSelector("metadata.name", name))
	s.serveWatch(w, r, opts)
}

// initialEventsEnd tells the bookmark that ends a WatchList's initial
// events.
func initialEventsEnd(ev watch.Event) bool {
	if ev.Type != watch.Bookmark {
		return false
	}
	m, err := meta.Accessor(ev.Object)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}
