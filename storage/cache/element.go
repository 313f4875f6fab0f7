package cache

import (
	"bytes"
	"fmt"
	"reflect"
	"sync/atomic"
	"weak"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage"
)

// element is one object of the state. Elements are never changed once in
// a tree, except for their shared slot: a change replaces the element.
//
// A cache with a codec (Config.Codec) keeps each object encoded, in data:
// about the size of its value in etcd, where a decoded object costs
// several times that in Go memory, and the heap goal doubles it. Readers
// decode what they need (object) and drop it. A cache without one keeps
// the objects themselves, in obj, and hands them out read only.
type element struct {
	key string
	// data is the object encoded by the cache's codec, resourceVersion
	// included; nil when the cache keeps objects decoded.
	data []byte
	// msgStart and msgEnd bound the protobuf message in data when data is
	// kube's protobuf envelope (both 0 if not): found once, here, so that
	// a list writes each item's message without reading its envelope.
	msgStart, msgEnd uint32
	// obj is the object, when the cache keeps objects decoded; read only.
	obj runtime.Object
	// attrs are the object's labels and selectable fields, encoded, when
	// the cache keeps them (see keepAttrs); "" if not.
	attrs string
	// shared is the object as GetShared answers with it, made by the
	// first; held weakly when the element is encoded, so that an object
	// read often is decoded and encoded once per garbage collection, and
	// one read once costs nothing after it.
	shared sharedSlot
	// read is the object as readers that share it (lists, initial
	// events, selectors) read it, held weakly when the element is
	// encoded: concurrent and repeated reads of an object decode it once
	// per garbage collection, and the cache keeps none.
	read sharedSlot
}

// newElement returns the element of obj at key: obj itself in a cache
// without a codec, else obj's encoding (obj is then left as it was).
// Run's goroutine only: it encodes through c.run.encodeBuf.
func (c *Cacher) newElement(key string, obj runtime.Object) (*element, error) {
	if c.codec == nil {
		e := &element{key: key, obj: obj}
		c.keepAttrs(e, obj)
		return e, nil
	}
	c.run.encodeBuf.Reset()
	if err := c.codec.Encode(obj, &c.run.encodeBuf); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", key, err)
	}
	// Exactly its size: the buffer grows by doubling.
	e := &element{key: key, data: bytes.Clone(c.run.encodeBuf.Bytes())}
	if _, _, msg, err := protobufEnvelopeKind(e.data); err == nil {
		// msg is a slice of data: its start is how much less room it has.
		e.msgStart = uint32(cap(e.data) - cap(msg))
		e.msgEnd = e.msgStart + uint32(len(msg))
	}
	c.keepAttrs(e, obj)
	return e, nil
}

// message returns the protobuf message of e's data, if data is kube's
// protobuf envelope.
func (e *element) message() ([]byte, bool) {
	return e.data[e.msgStart:e.msgEnd], e.msgEnd > 0
}

// object returns e's object for reading only: the cache's own in a cache
// without a codec, else a decoding of it that other readers may share.
func (c *Cacher) object(e *element) (runtime.Object, error) {
	if e.data == nil {
		return e.obj, nil
	}
	o, err := c.sharedOf(&e.read, e)
	if err != nil {
		return nil, err
	}
	return o.obj, nil
}

// ownObject returns e's object for the caller to keep and change: a copy
// of the cache's own, or a new decoding.
func (c *Cacher) ownObject(e *element) (runtime.Object, error) {
	if e.data == nil {
		return e.obj.DeepCopyObject(), nil
	}
	return c.decode(e)
}

// decode decodes e's data into a new object. Data the codec encoded
// decodes, so an error here is a bug; the caller reports it as etcd3
// reports a value that does not decode.
func (c *Cacher) decode(e *element) (runtime.Object, error) {
	obj := c.newFunc()
	if ok, err := unmarshalStored(e.data, obj); ok || err != nil {
		if err != nil {
			return nil, storage.NewError(storage.ErrInvalidObject, e.key, 0, err.Error())
		}
		return obj, nil
	}
	out, _, err := c.codec.Decode(e.data, nil, obj)
	if err != nil {
		return nil, storage.NewError(storage.ErrInvalidObject, e.key, 0, err.Error())
	}
	if out != obj {
		return nil, storage.NewError(storage.ErrInvalidObject, e.key, 0, fmt.Sprintf("decoded %T, want %T", out, obj))
	}
	return obj, nil
}

// protoUnmarshaler is what generated protobuf types implement.
type protoUnmarshaler interface{ Unmarshal([]byte) error }

// unmarshalStored decodes data, kube's protobuf envelope, into obj, a
// generated protobuf type, as the codec would: the message, then the
// envelope's kind. The codec's decoding also converts (to the version the
// cache encoded at: nothing) and defaults (what was defaulted before it
// was encoded: nothing); this is the same without the machinery. ok is
// false if data or obj is not such (the codec then decodes).
func unmarshalStored(data []byte, obj runtime.Object) (ok bool, err error) {
	m, isProto := obj.(protoUnmarshaler)
	if !isProto {
		return false, nil
	}
	apiVersion, kind, raw, err := protobufEnvelopeKind(data)
	if err != nil {
		return false, nil
	}
	gv, err := schema.ParseGroupVersion(string(apiVersion))
	if err != nil {
		return false, nil
	}
	if err := m.Unmarshal(raw); err != nil {
		return true, err
	}
	obj.GetObjectKind().SetGroupVersionKind(gv.WithKind(string(kind)))
	return true, nil
}

// objectInto sets *out to e's object, the caller's own; out must be of
// the cache's type.
func (c *Cacher) objectInto(e *element, out runtime.Object) error {
	obj, err := c.ownObject(e)
	if err != nil {
		return err
	}
	dst, src := reflect.ValueOf(out), reflect.ValueOf(obj)
	if dst.Kind() != reflect.Pointer || dst.IsNil() || dst.Type() != src.Type() {
		return fmt.Errorf("cannot read a %T into a %T", obj, out)
	}
	dst.Elem().Set(src.Elem())
	return nil
}

// sharedSlot holds a sharedObject made for an element or an event,
// strongly or weakly.
type sharedSlot struct{ p atomic.Pointer[sharedRef] }

type sharedRef struct {
	strong *sharedObject
	weak   weak.Pointer[sharedObject]
}

// load returns the slot's object, nil if none or if it was collected.
func (s *sharedSlot) load() (*sharedObject, *sharedRef) {
	r := s.p.Load()
	switch {
	case r == nil:
		return nil, nil
	case r.strong != nil:
		return r.strong, r
	}
	return r.weak.Value(), r
}

// get returns the slot's object, or stores and returns the one make
// makes (nil: nothing is stored); weakly if weakly. Two readers may
// both make one; the first stored wins.
func (s *sharedSlot) get(weakly bool, make func() *sharedObject) *sharedObject {
	for {
		o, r := s.load()
		if o != nil {
			return o
		}
		o = make()
		if o == nil {
			return nil
		}
		nr := &sharedRef{strong: o}
		if weakly {
			nr = &sharedRef{weak: weak.Make(o)}
		}
		if s.p.CompareAndSwap(r, nr) {
			return o
		}
	}
}
