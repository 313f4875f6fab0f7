package cache

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// GetShared reads key as Get does, into an object that only serializers
// may read: a runtime.CacheableObject over the cache's own object, made
// once per object version and prepare, which encodes once per wire format
// and version and hands out copies (GetObject). Repeated GETs of an
// unchanged object then cost neither a copy nor an encoding. Its
// encodings live as long as the object's version in the cache. What the
// cache does not serve the backend does, into a new object.
//
// prepare is what the reader does to an object before answering with it
// (the registry's defaulting on read; nil: nothing); prepareID identifies
// it: readers of a resource passing the same ID pass the same function.
func (c *Cacher) GetShared(ctx context.Context, key string, opts storage.GetOptions, prepareID reflect.Type, prepare func(runtime.Object)) (runtime.Object, error) {
	ctx, span := startGetSpan(ctx, key, opts)
	defer span.End()
	e, ok, err := c.getElement(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	if !ok {
		out := c.newFunc()
		if err := c.backend.storage.Get(ctx, key, opts, out); err != nil {
			return nil, err
		}
		if prepare != nil {
			prepare(out)
		}
		return out, nil
	}
	if e == nil { // not found, and opts.IgnoreNotFound
		return c.newFunc(), nil
	}
	return c.response(e, prepareID, prepare)
}

// response is the element's object as GetShared answers with it, made
// by the first GetShared of this version of the object.
func (c *Cacher) response(e *element, prepareID reflect.Type, prepare func(runtime.Object)) (runtime.Object, error) {
	var err error
	prepared := func() *sharedObject {
		obj, derr := c.object(e)
		if derr != nil {
			err = derr
			return nil
		}
		o := newSharedObject(obj)
		o.prepareID, o.prepare = prepareID, prepare
		return o
	}
	o := e.shared.get(e.data != nil, prepared)
	if o == nil {
		return nil, err
	}
	if o.prepareID != prepareID {
		// Another reader's preparation (never, with one registry per
		// resource): answer with an object of its own.
		if o = prepared(); o == nil {
			return nil, err
		}
	}
	return o, nil
}
