package etcd3

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/capstan-io/capstan/storage"
)

func TestEtcdErrorUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no leader, as the client returns it", rpctypes.ErrNoLeader, true},
		{"no leader, as gRPC carries it", rpctypes.ErrGRPCNoLeader, true},
		{"request timed out", rpctypes.ErrTimeout, true},
		{"timed out after a leader failed", rpctypes.ErrTimeoutDueToLeaderFail, true},
		{"no connection", status.Error(codes.Unavailable, "connection refused"), true},
		{"wrapped", fmt.Errorf("txn: %w", rpctypes.ErrNoLeader), true},
		{"compacted", rpctypes.ErrCompacted, false},
		{"request too large", rpctypes.ErrRequestTooLarge, false},
		{"the caller's deadline", context.DeadlineExceeded, false},
		{"the caller's deadline, from gRPC", status.Error(codes.DeadlineExceeded, "deadline"), false},
		{"another error", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := etcdError("get", "/configmaps/default/a", tc.err)
			if got := errors.Is(err, storage.ErrUnavailable); got != tc.want {
				t.Errorf("etcdError(%v) is ErrUnavailable: %v, want %v (%v)", tc.err, got, tc.want, err)
			}
		})
	}
}
