package etcd3

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// RequestWatchProgress asks etcd for a progress notification on the
// watches this store started with ctx (or a context with the same gRPC
// metadata): each that asked for ProgressNotify gets a BOOKMARK at etcd's
// current revision once it has delivered every event up to it. clientv3
// multiplexes watches on one stream per metadata and answers a progress
// request on its stream only, hence the same WithRequireLeader as Watch.
// The watch cache uses it to learn quickly that it has caught up with a
// revision.
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	return s.client.RequestProgress(clientv3.WithRequireLeader(ctx))
}
