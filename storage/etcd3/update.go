package etcd3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// GuaranteedUpdate applies tryUpdate to the current object and writes the
// result with If(modRevision == read revision), retrying on a concurrent
// write. A cached copy saves the first read; an error computed from a copy
// that turns out stale is retried on the current object.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExisting runtime.Object) error {
	etcdKey, err := s.keys.etcdKey(key, false)
	if err != nil {
		return err
	}
	r, err := s.newStateReader(key, etcdKey, dest, ignoreNotFound)
	if err != nil {
		return err
	}
	ctx, span := s.startSpan(ctx, "GuaranteedUpdate etcd3", key, dest)
	defer span.End()
	st, isCurrent, err := r.initial(ctx, cachedExisting)
	if err != nil {
		return err
	}
	for {
		ret, ttl, err := applyUpdate(key, st, preconditions, tryUpdate)
		if err != nil {
			if isCurrent {
				return err
			}
			if st, err = r.refresh(ctx, st, err); err != nil {
				return err
			}
			isCurrent = true
			continue
		}
		data, err := runtime.Encode(s.codec, ret)
		if err != nil {
			return fmt.Errorf("encoding %q: %w", key, err)
		}
		if c, ok := s.codec.(carrier); ok && st.data != nil {
			if data, err = c.Carry(data, st.data); err != nil {
				return fmt.Errorf("encoding %q: %w", key, err)
			}
		}
		if !st.stale && st.data != nil && bytes.Equal(data, st.data) {
			// Nothing changes: do not write (no new revision, no watch
			// event), but only if the bytes compared are etcd's, and
			// they are not encrypted with an old key: a no-op update
			// rewrites those, which is how keys are rotated.
			if !isCurrent {
				if st, err = r.current(ctx); err != nil {
					return err
				}
				isCurrent = true
				if !bytes.Equal(data, st.data) {
					continue
				}
			}
			if !st.stale {
				return s.decode(st.data, dest, st.rev, key)
			}
		}
		stored, err := s.toStorage(ctx, data, etcdKey)
		if err != nil {
			return err
		}
		resp, err := s.putIfUnchanged(ctx, key, etcdKey, stored, ttl, st.rev)
		callEvent(span, "Txn", err)
		if err != nil {
			return err
		}
		if !resp.Succeeded {
			if st, err = r.fromKV(ctx, firstKV(resp)); err != nil {
				return err
			}
			isCurrent = true
			continue
		}
		return s.decode(data, dest, resp.Header.Revision, key)
	}
}

// carrier is a codec whose objects in memory are at a version lacking
// fields of the stored one (storagecodec.NewConverting's): Carry puts the
// fields of the stored bytes old that its objects cannot hold into data,
// the encoding of an update.
type carrier interface {
	Carry(data, old []byte) ([]byte, error)
}

// initial returns the state to start from: the cached copy if there is
// one, else etcd's. isCurrent tells which.
func (r *stateReader) initial(ctx context.Context, cached runtime.Object) (st *objState, isCurrent bool, err error) {
	// A carrying codec needs etcd's bytes: those of a cached copy hold no
	// more than it.
	if _, carries := r.s.codec.(carrier); cached != nil && !carries {
		st, err = r.fromObject(cached)
		return st, false, err
	}
	st, err = r.current(ctx)
	return st, true, err
}

// refresh reads the current state after cause was computed from the
// possibly stale st. If st was current after all, cause stands.
func (r *stateReader) refresh(ctx context.Context, st *objState, cause error) (*objState, error) {
	fresh, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	if fresh.rev == st.rev {
		return nil, cause
	}
	return fresh, nil
}

// applyUpdate checks the preconditions against st and calls tryUpdate.
func applyUpdate(key string, st *objState, p *storage.Preconditions, tryUpdate storage.UpdateFunc) (runtime.Object, uint64, error) {
	if err := p.Check(key, st.obj); err != nil {
		return nil, 0, err
	}
	ret, ttl, err := tryUpdate(st.obj, storage.ResponseMeta{ResourceVersion: uint64(st.rev)})
	if err != nil {
		return nil, 0, err
	}
	if ret == nil {
		return nil, 0, errors.New("tryUpdate returned no object and no error")
	}
	if err := clearForStorage(ret); err != nil {
		return nil, 0, err
	}
	if ttl == nil {
		return ret, 0, nil
	}
	return ret, *ttl, nil
}

// putIfUnchanged writes data if key's mod revision is still rev (0: the key
// does not exist), else reads the key in the same transaction.
func (s *Store) putIfUnchanged(ctx context.Context, key, etcdKey string, data []byte, ttl uint64, rev int64) (*clientv3.TxnResponse, error) {
	opts, err := s.leases.putOptions(ctx, ttl)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(etcdKey), "=", rev)).
		Then(clientv3.OpPut(etcdKey, string(data), opts...)).
		Else(clientv3.OpGet(etcdKey)).
		Commit()
	s.record("update", began, err)
	if err != nil {
		return nil, etcdError("update", key, err)
	}
	return resp, nil
}

// firstKV returns the key read by the Else branch of a failed transaction,
// nil if it does not exist.
func firstKV(resp *clientv3.TxnResponse) *mvccpb.KeyValue {
	if len(resp.Responses) == 0 {
		return nil
	}
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return nil
	}
	return kvs[0]
}
