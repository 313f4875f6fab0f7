package etcd3

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// RequireLeader makes client's key-value calls and lease grants fail at
// once, with etcd's "no leader", when the member they reach has no
// leader, as its watches already do (watchContext). Without it, a cluster
// that lost its quorum holds every call for etcd's request timeout
// (seconds), and the client retries reads until the caller's deadline: a
// request would hang for the whole of --request-timeout, where now it is
// told to come back (storage.ErrUnavailable, a 503 with Retry-After).
// The wrappers are set in place of the client's own, as etcd's namespace
// package sets its prefixing ones.
func RequireLeader(client *clientv3.Client) {
	client.KV = leaderKV{client.KV}
	client.Lease = leaderLease{client.Lease}
}

type leaderKV struct{ clientv3.KV }

func (kv leaderKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	return kv.KV.Put(clientv3.WithRequireLeader(ctx), key, val, opts...)
}

func (kv leaderKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return kv.KV.Get(clientv3.WithRequireLeader(ctx), key, opts...)
}

func (kv leaderKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	return kv.KV.Delete(clientv3.WithRequireLeader(ctx), key, opts...)
}

func (kv leaderKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	return kv.KV.Compact(clientv3.WithRequireLeader(ctx), rev, opts...)
}

func (kv leaderKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	return kv.KV.Do(clientv3.WithRequireLeader(ctx), op)
}

func (kv leaderKV) Txn(ctx context.Context) clientv3.Txn {
	return kv.KV.Txn(clientv3.WithRequireLeader(ctx))
}

type leaderLease struct{ clientv3.Lease }

func (l leaderLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	return l.Lease.Grant(clientv3.WithRequireLeader(ctx), ttl)
}
