// Package embedded runs an etcd server inside the capstan process: the
// default storage when no --etcd-servers are given, and the backend of every
// storage test. It listens on loopback only.
package embedded

import (
	"google.golang.org/grpc"

	"log/slog"
	"time"
)

// Config describes an embedded etcd server.
type Config struct {
	// Dir holds the data (WAL and bolt database). A restart on the same Dir
	// keeps every key and revision. Required.
	Dir string

	// Logger receives etcd's errors. nil discards them.
	Logger *slog.Logger

	// UnsafeNoFsync skips fsync on writes: data may be lost on a crash of
	// the machine. Only for tests, where it makes writes several times faster.
	UnsafeNoFsync bool

	// AutoCompactionRetention makes etcd itself compact history older than
	// this (periodic mode). Zero leaves compaction to the apiserver's own
	// compactor (storage/etcd3.Compactor), which is what kube-apiserver does.
	AutoCompactionRetention time.Duration

	// WatchProgressNotifyInterval is how often etcd sends progress
	// notifications to idle watchers that asked for them. Zero keeps etcd's
	// default (10 minutes).
	WatchProgressNotifyInterval time.Duration

	// QuotaBackendBytes caps the database size. Zero keeps etcd's default
	// (2 GiB).
	QuotaBackendBytes int64

	// StartTimeout bounds how long Start waits for the server to be ready.
	// Zero means one minute.
	StartTimeout time.Duration

	// DialOptions are added to the client's gRPC options (tracing's
	// client spans).
	DialOptions []grpc.DialOption
}
