package etcd3

import (
	"context"
	"hash/maphash"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/capstan-io/capstan/storage"
)

// SizeEstimator remembers the stored size of every key that the stores
// sharing it have read, from lists and watch events, so that the average
// object size costs no read of its own: kube's estimate. Keys deleted
// unseen are dropped when Stats lists the keys.
//
// Keys are remembered by a 64-bit hash, not as strings: eight bytes a key
// where a string costs its length and a header, which for every key of a
// large resource is most of the estimator's heap. Two keys of one hash
// would count as one, which would change an average by next to nothing.
type SizeEstimator struct {
	mu    sync.Mutex // guards sizes
	sizes map[uint64]keySize
}

// keySeed seeds the hash of keys; one per process, as sizes live only in it.
var keySeed = maphash.MakeSeed()

func keyHash(key []byte) uint64 { return maphash.Bytes(keySeed, key) }

type keySize struct {
	bytes, rev int64
}

func (e *SizeEstimator) observe(kvs ...*mvccpb.KeyValue) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sizes == nil {
		e.sizes = map[uint64]keySize{}
	}
	for _, kv := range kvs {
		h := keyHash(kv.Key)
		if old, ok := e.sizes[h]; ok && old.rev >= kv.ModRevision {
			continue
		}
		e.sizes[h] = keySize{bytes: int64(len(kv.Value)), rev: kv.ModRevision}
	}
}

func (e *SizeEstimator) deleted(kv *mvccpb.KeyValue) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := keyHash(kv.Key)
	if old, ok := e.sizes[h]; ok && old.rev < kv.ModRevision {
		delete(e.sizes, h)
	}
}

// average keeps only the sizes of keys, which are all the keys stored,
// and returns their average (0 if none is known).
func (e *SizeEstimator) average(keys []*mvccpb.KeyValue) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := make(map[uint64]keySize, len(e.sizes))
	var sum int64
	for _, kv := range keys {
		h := keyHash(kv.Key)
		if ks, ok := e.sizes[h]; ok {
			kept[h] = ks
			sum += ks.bytes
		}
	}
	e.sizes = kept
	if len(kept) == 0 {
		return 0
	}
	return sum / int64(len(kept))
}

// Stats counts the resource's keys with a keys-only read and averages
// the sizes of those the store has seen.
func (s *Store) Stats(ctx context.Context) (storage.Stats, error) {
	prefix, err := s.keys.etcdKey(s.keys.resourcePrefix, true)
	if err != nil {
		return storage.Stats{}, err
	}
	resp, err := s.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return storage.Stats{}, etcdError("stats", s.keys.resourcePrefix, err)
	}
	return storage.Stats{ObjectCount: int64(len(resp.Kvs)), AverageSizeBytes: s.sizes.average(resp.Kvs)}, nil
}
