package etcd3

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/capstan-io/capstan/storage"
)

// TestWatchContextStreams: the etcd client puts watches on one gRPC
// stream per outgoing metadata, so the metadata must tell apart the
// streams storage.WithWatchStream names, and be the same for one name
// (a cache's watch and its progress requests share a stream).
func TestWatchContextStreams(t *testing.T) {
	key := func(ctx context.Context) string {
		md, _ := metadata.FromOutgoingContext(watchContext(ctx))
		return fmt.Sprint(md)
	}
	bg := context.Background()
	a := storage.WithWatchStream(bg, "/configmaps#1")
	b := storage.WithWatchStream(bg, "/configmaps#2")
	for _, tc := range []struct {
		name   string
		x, y   context.Context
		shared bool
	}{
		{"unnamed watches share a stream", bg, context.WithValue(bg, struct{}{}, 1), true},
		{"one name, one stream", a, storage.WithWatchStream(bg, "/configmaps#1"), true},
		{"a named stream is not the shared one", a, bg, false},
		{"two names, two streams", a, b, false},
	} {
		if got := key(tc.x) == key(tc.y); got != tc.shared {
			t.Errorf("%s: same metadata = %v (%s, %s)", tc.name, got, key(tc.x), key(tc.y))
		}
	}
}
