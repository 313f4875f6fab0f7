package etcd3

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// errResourceVersionSetOnCreate is kube's answer to a create that carries
// a resourceVersion; the registry clears it before storage sees it.
var errResourceVersionSetOnCreate = errors.New("resourceVersion should not be set on objects to be created")

// Create stores obj at key if the key is free, in one transaction:
// If(modRevision == 0) Then(put). obj's resourceVersion and selfLink are
// cleared, as they are never stored.
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	etcdKey, err := s.keys.etcdKey(key, false)
	if err != nil {
		return err
	}
	ctx, span := s.startSpan(ctx, "Create etcd3", key, obj)
	defer span.End()
	if rv, err := objectResourceVersion(obj); err != nil {
		return err
	} else if rv != 0 {
		return errResourceVersionSetOnCreate
	}
	if err := clearForStorage(obj); err != nil {
		return err
	}
	data, err := runtime.Encode(s.codec, obj)
	if err != nil {
		return fmt.Errorf("encoding %q: %w", key, err)
	}
	stored, err := s.toStorage(ctx, data, etcdKey)
	if err != nil {
		return err
	}
	opts, err := s.leases.putOptions(ctx, ttl)
	if err != nil {
		return err
	}
	began := time.Now()
	resp, err := s.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(etcdKey), "=", 0)).
		Then(clientv3.OpPut(etcdKey, string(stored), opts...)).
		Commit()
	s.record("create", began, err)
	callEvent(span, "Txn", err)
	if err != nil {
		return etcdError("create", key, err)
	}
	if !resp.Succeeded {
		return storage.NewError(storage.ErrKeyExists, key, 0, "")
	}
	if out == nil {
		return nil
	}
	return s.decode(data, out, resp.Header.Revision, key)
}
