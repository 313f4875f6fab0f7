package etcd3

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// objState is an object as read from etcd (or given by the caller as its
// cached copy) during an update or delete.
type objState struct {
	obj  runtime.Object
	rev  int64  // the mod revision; 0 if the key does not exist
	data []byte // the stored bytes, decrypted; nil if the key does not exist
	// stale: data was written with another key or provider than the
	// current write one; a write must not be skipped as a no-op.
	stale bool
}

// stateReader reads the current state of one key, decoding into new
// objects of the type of the caller's destination.
type stateReader struct {
	s              *Store
	key, etcdKey   string
	newObj         func() runtime.Object
	ignoreNotFound bool
}

func (s *Store) newStateReader(key, etcdKey string, dest runtime.Object, ignoreNotFound bool) (*stateReader, error) {
	v, err := conversion.EnforcePtr(dest)
	if err != nil {
		return nil, fmt.Errorf("destination must be a pointer: %w", err)
	}
	newObj := func() runtime.Object { return reflect.New(v.Type()).Interface().(runtime.Object) }
	if u, ok := dest.(runtime.Unstructured); ok {
		newObj = func() runtime.Object { return u.NewEmptyInstance() }
	}
	return &stateReader{s: s, key: key, etcdKey: etcdKey, newObj: newObj, ignoreNotFound: ignoreNotFound}, nil
}

// current reads the key from etcd.
func (r *stateReader) current(ctx context.Context) (*objState, error) {
	began := time.Now()
	resp, err := r.s.client.Get(ctx, r.etcdKey)
	r.s.record("get", began, err)
	if err != nil {
		return nil, etcdError("get", r.key, err)
	}
	var kv *mvccpb.KeyValue
	if len(resp.Kvs) > 0 {
		kv = resp.Kvs[0]
	}
	return r.fromKV(ctx, kv)
}

// fromKV decodes kv; nil means the key does not exist.
func (r *stateReader) fromKV(ctx context.Context, kv *mvccpb.KeyValue) (*objState, error) {
	obj := r.newObj()
	if kv == nil {
		if !r.ignoreNotFound {
			return nil, notFound(r.key)
		}
		return &objState{obj: obj}, runtime.SetZeroValue(obj)
	}
	data, stale, err := r.s.fromStorage(ctx, kv.Value, r.etcdKey, r.key)
	if err != nil {
		return nil, err
	}
	if err := r.s.decode(data, obj, kv.ModRevision, r.key); err != nil {
		return nil, err
	}
	return &objState{obj: obj, rev: kv.ModRevision, data: data, stale: stale}, nil
}

// fromObject makes a state of the caller's cached copy. Its bytes are
// computed by encoding a copy without the resourceVersion, which is what
// etcd holds if the copy is current.
func (r *stateReader) fromObject(obj runtime.Object) (*objState, error) {
	rev, err := objectResourceVersion(obj)
	if err != nil {
		return nil, err
	}
	c := obj.DeepCopyObject()
	if err := clearForStorage(c); err != nil {
		return nil, err
	}
	data, err := runtime.Encode(r.s.codec, c)
	if err != nil {
		return nil, fmt.Errorf("encoding cached %q: %w", r.key, err)
	}
	return &objState{obj: obj, rev: rev, data: data}, nil
}
