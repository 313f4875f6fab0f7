package cache

import (
	"bytes"
	"io"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// sharedObject is an event's object as every watch that asked for shared
// objects (storage.ListOptions.SharedObjects) receives it. Serializers
// see a runtime.CacheableObject and call CacheEncode, so the object is
// copied and encoded once per wire format and version, not once per
// watch: with a thousand watches of a resource, encoding was most of a
// write's fan-out. The cache's object is never handed out: GetObject and
// DeepCopyObject return copies.
type sharedObject struct {
	obj  runtime.Object // the cache's; read only
	kind fixedKind
	// prepare, if set, is applied to every copy handed out (GetShared's
	// defaulting on read); prepareID identifies it.
	prepare   func(runtime.Object)
	prepareID reflect.Type
	mu        sync.Mutex
	encoded   map[runtime.Identifier]*encoding
}

// encoding is one serialization of a sharedObject, made once.
type encoding struct {
	once sync.Once
	raw  []byte
	err  error
}

var _ runtime.CacheableObject = (*sharedObject)(nil)

func newSharedObject(obj runtime.Object) *sharedObject {
	return &sharedObject{obj: obj, kind: fixedKind(obj.GetObjectKind().GroupVersionKind())}
}

// CacheEncode writes the encoding of the encoder id, made by encode (on
// a copy: encoders set the kind of what they encode) the first time.
func (o *sharedObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	o.mu.Lock()
	if o.encoded == nil {
		o.encoded = map[runtime.Identifier]*encoding{}
	}
	e, ok := o.encoded[id]
	if !ok {
		e = &encoding{}
		o.encoded[id] = e
	}
	o.mu.Unlock()
	e.once.Do(func() {
		var buf bytes.Buffer
		e.err = encode(o.GetObject(), &buf)
		e.raw = buf.Bytes()
	})
	if e.err != nil {
		return e.err
	}
	_, err := w.Write(e.raw)
	return err
}

// GetObject returns a copy of the object, the receiver's to change.
func (o *sharedObject) GetObject() runtime.Object {
	obj := o.obj.DeepCopyObject()
	if o.prepare != nil {
		o.prepare(obj)
	}
	return obj
}

// DeepCopyObject returns a copy of the object itself, not of the wrapper.
func (o *sharedObject) DeepCopyObject() runtime.Object { return o.GetObject() }

// GetObjectKind is the object's kind as it was when wrapped; setting it
// does nothing, so that no receiver changes what others encode.
func (o *sharedObject) GetObjectKind() schema.ObjectKind { return &o.kind }

// fixedKind is an ObjectKind that ignores changes.
type fixedKind schema.GroupVersionKind

func (k *fixedKind) GroupVersionKind() schema.GroupVersionKind   { return schema.GroupVersionKind(*k) }
func (k *fixedKind) SetGroupVersionKind(schema.GroupVersionKind) {}

// sharedObj is ev's object wrapped for the watches that share objects,
// and for the others to read.
func (c *Cacher) sharedObj(ev *event) (*sharedObject, error) {
	return c.sharedOf(&ev.shared, ev.elem)
}

// prevObj is the object before ev's change, for reading only; nil if
// there was none.
func (c *Cacher) prevObj(ev *event) (runtime.Object, error) {
	if ev.prev == nil {
		return nil, nil
	}
	o, err := c.sharedOf(&ev.prevShared, ev.prev)
	if err != nil {
		return nil, err
	}
	return o.obj, nil
}

// sharedOf is the sharedObject of e in slot, made on first use: weakly
// held when e is encoded, as it is then a decoding of its own.
func (c *Cacher) sharedOf(slot *sharedSlot, e *element) (*sharedObject, error) {
	var err error
	o := slot.get(e.data != nil, func() *sharedObject {
		if e.data == nil {
			return newSharedObject(e.obj)
		}
		obj, derr := c.decode(e)
		if derr != nil {
			err = derr
			return nil
		}
		return newSharedObject(obj)
	})
	return o, err
}
