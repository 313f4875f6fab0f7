package cache

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage"
)

// storedObject is an initial event's object for a watch whose receiver
// encodes it (storage.EncodedObjects), in a cache that keeps objects
// encoded: the element itself, decoded only if the receiver needs the
// object. A protobuf watch of the version the cache stores writes the
// element's encoding as it is (Protobuf): a WatchList of N objects then
// decodes, copies and encodes none of them.
type storedObject struct {
	c *Cacher
	e *element
	// kind is the kind and version of the envelopes of the watch's
	// elements, read from the first: the codec encodes every object of
	// the cache at one version.
	kind *fixedKind
}

var (
	_ runtime.CacheableObject  = (*storedObject)(nil)
	_ storage.ProtobufEnvelope = (*storedObject)(nil)
)

// storedKind is the kind and version of data, kube's protobuf envelope;
// empty if data is not one.
func storedKind(data []byte) *fixedKind {
	k := fixedKind{}
	if apiVersion, kind, _, err := protobufEnvelopeKind(data); err == nil {
		if gv, err := schema.ParseGroupVersion(string(apiVersion)); err == nil {
			k = fixedKind(gv.WithKind(string(kind)))
		}
	}
	return &k
}

// Protobuf returns the element's encoding if it is kube's protobuf
// envelope at version gv: the very bytes the codec writes for the object
// at gv, as the cache encoded the object with the same Marshal and
// envelope.
func (o *storedObject) Protobuf(gv schema.GroupVersion) ([]byte, bool) {
	if o.e.msgEnd == 0 || o.kind.GroupVersionKind().GroupVersion() != gv {
		return nil, false
	}
	return o.e.data, true
}

// CacheEncode encodes a decoding of the object: it is sent once, so
// there is nothing to cache.
func (o *storedObject) CacheEncode(_ runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	obj, err := o.c.ownObject(o.e)
	if err != nil {
		return err
	}
	return encode(obj, w)
}

// GetObject returns a decoding of the object, the receiver's own. Data
// the codec encoded decodes (see Cacher.decode), so the error is lost
// only to a bug; the receiver then gets an empty object of the type.
func (o *storedObject) GetObject() runtime.Object {
	obj, err := o.c.ownObject(o.e)
	if err != nil {
		o.c.logger.Error("watch cache decoding an initial event's object", "key", o.e.key, "err", err)
		return o.c.newFunc()
	}
	return obj
}

// DeepCopyObject returns a decoding of the object itself, not of the
// wrapper.
func (o *storedObject) DeepCopyObject() runtime.Object { return o.GetObject() }

// GetObjectKind is the kind of the envelope; setting it does nothing.
func (o *storedObject) GetObjectKind() schema.ObjectKind { return o.kind }
