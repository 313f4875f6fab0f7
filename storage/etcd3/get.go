package etcd3

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// Get reads the latest state of key. A resourceVersion in opts is a lower
// bound: the latest state always satisfies it unless it is in the future.
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	etcdKey, err := s.keys.etcdKey(key, false)
	if err != nil {
		return err
	}
	minRV, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	ctx, span := s.startSpan(ctx, "Get etcd3", key, nil)
	defer span.End()
	began := time.Now()
	resp, err := s.client.Get(ctx, etcdKey)
	s.record("get", began, err)
	callEvent(span, "Get", err)
	if err != nil {
		return etcdError("get", key, err)
	}
	if minRV > uint64(resp.Header.Revision) {
		return tooLarge(key, minRV, resp.Header.Revision)
	}
	if len(resp.Kvs) == 0 {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(out)
		}
		return notFound(key)
	}
	kv := resp.Kvs[0]
	data, _, err := s.fromStorage(ctx, kv.Value, etcdKey, key)
	if err != nil {
		return err
	}
	return s.decode(data, out, kv.ModRevision, key)
}
