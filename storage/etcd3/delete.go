package etcd3

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// Delete removes key with If(modRevision == read revision) once the
// preconditions and validateDeletion accept the object read, retrying on a
// concurrent write. out receives the deleted object at the revision of the
// deletion, as a watcher sees it in the DELETED event.
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExisting runtime.Object) error {
	etcdKey, err := s.keys.etcdKey(key, false)
	if err != nil {
		return err
	}
	r, err := s.newStateReader(key, etcdKey, out, false)
	if err != nil {
		return err
	}
	st, isCurrent, err := r.initial(ctx, cachedExisting)
	if err != nil {
		return err
	}
	for {
		if err := checkDeletion(ctx, key, st.obj, preconditions, validateDeletion); err != nil {
			if isCurrent {
				return err
			}
			if st, err = r.refresh(ctx, st, err); err != nil {
				return err
			}
			isCurrent = true
			continue
		}
		began := time.Now()
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(etcdKey), "=", st.rev)).
			Then(clientv3.OpDelete(etcdKey)).
			Else(clientv3.OpGet(etcdKey)).
			Commit()
		s.record("delete", began, err)
		if err != nil {
			return etcdError("delete", key, err)
		}
		if !resp.Succeeded {
			if st, err = r.fromKV(ctx, firstKV(resp)); err != nil {
				return err
			}
			isCurrent = true
			continue
		}
		return s.decode(st.data, out, resp.Header.Revision, key)
	}
}

func checkDeletion(ctx context.Context, key string, obj runtime.Object, p *storage.Preconditions, validate storage.ValidateObjectFunc) error {
	if err := p.Check(key, obj); err != nil {
		return err
	}
	if validate == nil {
		return nil
	}
	return validate(ctx, obj)
}
