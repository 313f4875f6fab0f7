package etcd3

import (
	"testing"
	"time"
)

func TestLeaseReuse(t *testing.T) {
	ctx := t.Context()
	m := newLeaseManager(server.Client(), time.Minute)
	// A long TTL shares a lease within the window (5% of 1h > 1 minute).
	first, err := m.lease(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.lease(ctx, 3600)
	if err != nil || second != first {
		t.Fatalf("second lease %x (%v), want the first %x reused", second, err, first)
	}
	// A much shorter TTL would outlive its time on that lease.
	short, err := m.lease(ctx, 60)
	if err != nil || short == first {
		t.Fatalf("lease for 60s %x (%v) reused the one for an hour", short, err)
	}
	resp, err := server.Client().TimeToLive(ctx, first)
	if err != nil || resp.GrantedTTL != 3600+60 {
		t.Fatalf("granted %d (%v), want TTL plus the reuse window", resp.GrantedTTL, err)
	}
	// Small TTLs get no window, so every object gets its exact TTL.
	a, _ := m.lease(ctx, 5)
	b, _ := m.lease(ctx, 5)
	if a == b {
		t.Fatal("leases for 5s were shared")
	}
}
