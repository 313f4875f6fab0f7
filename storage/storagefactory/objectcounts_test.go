package storagefactory

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage"
)

type fakeReporter struct {
	stats storage.Stats
	err   error
}

func (f *fakeReporter) Stats(context.Context) (storage.Stats, error) { return f.stats, f.err }

// TestObjectCounts: a resource never read is unknown; a read count is
// served until three minutes old, then counts as kube's stale maximum;
// a failing read keeps the last count, which goes stale.
func TestObjectCounts(t *testing.T) {
	var o objectCounts
	pods := &fakeReporter{stats: storage.Stats{ObjectCount: 7, AverageSizeBytes: 900}}
	o.add(schema.GroupResource{Resource: "pods"}, pods)
	o.add(schema.GroupResource{Group: "apps", Resource: "deployments"}, &fakeReporter{err: errors.New("down")})
	t0 := time.Unix(1000, 0)
	o.refresh(context.Background(), func() time.Time { return t0 })
	for _, tc := range []struct {
		group, resource string
		at              time.Duration
		count, size     int64
		ok              bool
	}{
		{"", "pods", 0, 7, 900, true},
		{"", "pods", 3 * time.Minute, 7, 900, true},
		{"", "pods", 3*time.Minute + time.Second, staleObjectCount, staleObjectSize, true},
		{"apps", "deployments", 0, 0, 0, false},
		{"", "configmaps", 0, 0, 0, false},
	} {
		count, size, ok := o.statsAt(tc.group, tc.resource, t0.Add(tc.at))
		if count != tc.count || size != tc.size || ok != tc.ok {
			t.Errorf("%s/%s after %v: %d, %d, %v; want %d, %d, %v", tc.group, tc.resource, tc.at, count, size, ok, tc.count, tc.size, tc.ok)
		}
	}
	pods.err = errors.New("down")
	o.refresh(context.Background(), func() time.Time { return t0.Add(time.Hour) })
	if count, _, _ := o.statsAt("", "pods", t0.Add(time.Hour)); count != staleObjectCount {
		t.Errorf("a count that failed to refresh: %d, want stale", count)
	}
}
