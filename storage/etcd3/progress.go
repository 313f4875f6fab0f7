package etcd3

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/capstan-io/capstan/storage"
)

// RequestWatchProgress asks etcd for a progress notification on the
// watches this store started with ctx (or a context with the same gRPC
// metadata): each that asked for ProgressNotify gets a BOOKMARK at etcd's
// current revision once it has delivered every event up to it. clientv3
// multiplexes watches on one stream per metadata and answers a progress
// request on its stream only, hence the same watchContext as Watch.
// The watch cache uses it to learn quickly that it has caught up with a
// revision.
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	return s.client.RequestProgress(watchContext(ctx))
}

// watchContext is ctx as the etcd client takes it for a watch or a
// progress request: a leader required, and the gRPC stream that
// storage.WithWatchStream names, if any. The client puts watches whose
// contexts carry the same gRPC metadata on one stream.
func watchContext(ctx context.Context) context.Context {
	ctx = clientv3.WithRequireLeader(ctx)
	if name := storage.WatchStream(ctx); name != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "capstan-watch-stream", name)
	}
	return ctx
}
