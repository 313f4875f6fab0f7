package etcd3

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/capstan-io/capstan/storage"
)

// kube's messages, so that users and tools see the same text.
const (
	listExpiredMessage     = "The resourceVersion for the provided list is too old."
	continueExpiredMessage = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided " +
		"token results in an inconsistent list - objects that were created, " +
		"modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
)

func notFound(key string) error { return storage.NewError(storage.ErrNotFound, key, 0, "") }

func tooLarge(key string, want uint64, current int64) error {
	return storage.NewError(storage.ErrTooLargeResourceVersion, key, current,
		fmt.Sprintf("Too large resource version: %d, current: %d", want, current))
}

// etcdError wraps an error of the etcd client for key. etcd's
// Unavailable errors (no leader, a request timed out waiting for one, no
// member reachable) are storage.ErrUnavailable: the cluster cannot answer
// now and the caller should come back.
func etcdError(op, key string, err error) error {
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s %q: %w", op, key, err)
	case unavailable(err):
		return storage.NewError(storage.ErrUnavailable, key, 0, fmt.Sprintf("etcd %s: %v", op, err))
	}
	return fmt.Errorf("etcd %s %q: %w", op, key, err)
}

// unavailable reports whether err is etcd's (or gRPC's) Unavailable: the
// call was refused or timed out for want of a leader or a connection,
// never for what it asked.
func unavailable(err error) bool {
	var etcdErr rpctypes.EtcdError
	if errors.As(err, &etcdErr) {
		return etcdErr.Code() == codes.Unavailable
	}
	return status.Code(err) == codes.Unavailable
}

// isCompacted reports whether err says the revision read is compacted.
func isCompacted(err error) bool { return errors.Is(err, rpctypes.ErrCompacted) }

// isFutureRev reports whether err says the revision read is in the future.
func isFutureRev(err error) bool { return errors.Is(err, rpctypes.ErrFutureRev) }
