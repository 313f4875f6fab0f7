package handlers

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

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
	out, err := negotiateOutput(r, s.Serializer, s.shapesFor(s.Storage.New()))
	if err == nil && out.info.StreamSerializer == nil {
		err = notAcceptable(s.Serializer.SupportedMediaTypes())
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
	s.streamEvents(ctx, w, r, out, wi)
}

func (s *Scope) watchTimeout(opts *rest.ListOptions) time.Duration {
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
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
	stream := out.info.StreamSerializer
	framed := stream.Framer.NewFrameWriter(w)
	var embedded bytes.Buffer
	// The encoder of the last event's version: making one per event (its
	// identifier is built on each) was 4% of the server's CPU when 1,000
	// watches got an event.
	var encoderGV schema.GroupVersion
	var encoder runtime.Encoder
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			obj := ev.Object
			if co, ok := obj.(runtime.CacheableObject); ok && out.as != asObject {
				obj = co.GetObject()
			}
			if ev.Type != watch.Error {
				t, err := s.transform(r, obj, out)
				if err != nil {
					obj = ErrorToStatus(err, s.Logger)
				} else {
					obj = t
				}
			}
			embedded.Reset()
			if gv := s.targetVersion(obj); encoder == nil || gv != encoderGV {
				encoderGV, encoder = gv, s.Serializer.EncoderForVersion(out.info.Serializer, gv)
			}
			if err := encoder.Encode(obj, &embedded); err != nil {
				s.Logger.Error("encoding watch event", "err", err)
				return
			}
			event := &metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: embedded.Bytes()}}
			if err := stream.Serializer.Encode(event, framed); err != nil {
				return
			}
			if len(wi.ResultChan()) == 0 {
				_ = rc.Flush()
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
