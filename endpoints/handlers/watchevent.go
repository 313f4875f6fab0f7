package handlers

import (
	"bytes"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/capstan-io/capstan/endpoints/wire"
	"github.com/capstan-io/capstan/storage"
)

// watchEncoder writes the events of one watch stream, each a framed
// metav1.WatchEvent around the object in the negotiated encoding.
type watchEncoder struct {
	s      *Scope
	r      *http.Request
	out    output
	stream *runtime.StreamSerializerInfo
	framed io.Writer // the stream's framer over the response
	w      io.Writer // the response
	header []byte    // of a framed protobuf event (writeStored)
	// The encoder of the last event's version: making one per event (its
	// identifier is built on each) showed in the server's CPU profile when
	// many watches got an event.
	encoderGV schema.GroupVersion
	encoder   runtime.Encoder
	// sharedIDs name, per event type, the framed events of the encoder
	// cached in shared objects (see encodeShared).
	sharedIDs map[watch.EventType]runtime.Identifier
	embedded  bytes.Buffer
	// headed: a Table event went out; as kube's, only the first carries
	// the column definitions.
	headed bool
}

func newWatchEncoder(s *Scope, r *http.Request, out output, w io.Writer) *watchEncoder {
	stream := out.info.StreamSerializer
	return &watchEncoder{s: s, r: r, out: out, stream: stream, framed: stream.Framer.NewFrameWriter(w), w: w}
}

// write writes ev to w, the response the framer was made over.
func (e *watchEncoder) write(w io.Writer, ev watch.Event) error {
	obj := ev.Object
	if data, ok := e.storedProtobuf(obj); ok {
		return e.writeStored(data, ev.Type)
	}
	if co, ok := obj.(runtime.CacheableObject); ok && ev.Type != watch.Error {
		if e.out.as == asObject {
			return e.encodeShared(w, obj, co, ev.Type)
		}
		obj = co.GetObject()
	}
	if ev.Type != watch.Error {
		if t, err := e.s.transform(e.r, obj, e.out); err != nil {
			obj = ErrorToStatus(err, e.s.Logger)
		} else {
			obj = t
		}
		if table, ok := obj.(*metav1.Table); ok {
			if e.headed {
				table.ColumnDefinitions = nil
			}
			e.headed = true
		}
	}
	return e.encode(e.framed, obj, ev.Type)
}

// encode writes the framed event of type typ around obj to framed.
func (e *watchEncoder) encode(framed io.Writer, obj runtime.Object, typ watch.EventType) error {
	e.embedded.Reset()
	if err := encodeObject(e.encoderFor(obj), obj, &e.embedded); err != nil {
		e.s.Logger.Error("encoding watch event", "err", err)
		return err
	}
	return e.writeEvent(framed, e.embedded.Bytes(), typ)
}

// writeEvent writes the framed event of type typ around embedded, the
// object's encoding, to framed.
func (e *watchEncoder) writeEvent(framed io.Writer, embedded []byte, typ watch.EventType) error {
	event := &metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: embedded}}
	return encodeObject(e.stream.Serializer, event, framed)
}

// storedProtobuf returns obj's encoding as the watch writes it, when obj
// keeps it (the watch cache's initial events: storage.ProtobufEnvelope)
// and the watch writes objects as they are in protobuf at that version,
// in length-delimited frames.
func (e *watchEncoder) storedProtobuf(obj runtime.Object) ([]byte, bool) {
	pe, ok := obj.(storage.ProtobufEnvelope)
	if !ok || e.out.as != asObject || e.out.info.MediaType != runtime.ContentTypeProtobuf ||
		e.stream.Framer != protobuf.LengthDelimitedFramer {
		return nil, false
	}
	return pe.Protobuf(e.s.targetVersion(obj))
}

// writeStored writes the framed event of type typ around embedded, an
// object's protobuf envelope, without marshaling the event first.
func (e *watchEncoder) writeStored(embedded []byte, typ watch.EventType) error {
	var err error
	e.header, err = wire.WriteStoredEvent(e.w, e.header, embedded, typ)
	return err
}

func (e *watchEncoder) encoderFor(obj runtime.Object) runtime.Encoder {
	if gv := e.s.targetVersion(obj); e.encoder == nil || gv != e.encoderGV {
		e.encoderGV, e.encoder = gv, e.s.Serializer.EncoderForVersion(e.out.info.Serializer, gv)
		e.sharedIDs = nil
	}
	return e.encoder
}

// encodeShared writes the event of type typ around obj (co), an object shared
// with other watches, as one framed event that the first watch to send it
// encodes and caches in co for the others: with 1,000 watches of a
// resource, each encoding its own envelope was most of what a watch event
// allocated.
func (e *watchEncoder) encodeShared(w io.Writer, obj runtime.Object, co runtime.CacheableObject, typ watch.EventType) error {
	enc := e.encoderFor(obj)
	id, ok := e.sharedIDs[typ]
	if !ok {
		// The framing follows from the media type, which the encoder's
		// identifier names with the version.
		id = runtime.Identifier(string(enc.Identifier()) + ",watchEvent=" + string(typ) + ",stream=" + string(e.stream.Serializer.Identifier()))
		if e.sharedIDs == nil {
			e.sharedIDs = map[watch.EventType]runtime.Identifier{}
		}
		e.sharedIDs[typ] = id
	}
	return co.CacheEncode(id, func(obj runtime.Object, buf io.Writer) error {
		return e.encode(e.stream.Framer.NewFrameWriter(buf), obj, typ)
	}, w)
}
