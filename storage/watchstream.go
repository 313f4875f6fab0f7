package storage

import "context"

type watchStreamKey struct{}

// WithWatchStream returns ctx naming the backend watch stream that the
// watches and progress requests made with it share. A watch cache names
// one of its own: etcd multiplexes watches on a stream and answers a
// progress request for the whole stream, and with several watches on one
// stream a watch just created can be told of progress past events it has
// not yet been sent (etcd-io/etcd#15220; kube gives each cache a stream
// of its own for that reason). The cache would take that progress, then
// drop those events as older than itself, and serve a state without them.
func WithWatchStream(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, watchStreamKey{}, name)
}

// WatchStream returns the stream ctx names, or "" for the shared one.
func WatchStream(ctx context.Context) string {
	name, _ := ctx.Value(watchStreamKey{}).(string)
	return name
}
