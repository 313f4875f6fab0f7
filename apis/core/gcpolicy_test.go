package core

import (
	"context"
	"testing"

	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/request"
)

// TestDefaultGarbageCollectionPolicy: events take no part in garbage
// collection; replication controllers orphan their pods when deleted
// through core/v1 only, and delete them from inside the server.
func TestDefaultGarbageCollectionPolicy(t *testing.T) {
	through := func(group, version string) context.Context {
		return request.WithInfo(context.Background(), &request.Info{IsResourceRequest: true, APIGroup: group, APIVersion: version})
	}
	for _, tc := range []struct {
		name     string
		strategy registry.GarbageCollectionDefaulter
		ctx      context.Context
		want     registry.GarbageCollectionPolicy
	}{
		{"event", EventStrategy{}, through("", "v1"), registry.GarbageCollectionUnsupported},
		{"rc through v1", ReplicationControllerStrategy{}, through("", "v1"), registry.OrphanDependents},
		{"rc status through v1", ReplicationControllerStatusStrategy{}, through("", "v1"), registry.OrphanDependents},
		{"rc through another version", ReplicationControllerStrategy{}, through("", "v2"), registry.DeleteDependents},
		{"rc from inside the server", ReplicationControllerStrategy{}, context.Background(), registry.DeleteDependents},
	} {
		if got := tc.strategy.DefaultGarbageCollectionPolicy(tc.ctx); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
