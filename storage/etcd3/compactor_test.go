package etcd3

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	clocktesting "k8s.io/utils/clock/testing"
)

func newTestCompactor(t *testing.T, clk *clocktesting.FakeClock) *Compactor {
	t.Helper()
	cfg := CompactorConfig{Client: server.Client(), Interval: time.Minute}
	if clk != nil {
		cfg.Clock = clk
	}
	c, err := NewCompactor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// compactVersion reads the version of compactRevKey: the rounds so far.
func compactVersion(t *testing.T) int64 {
	t.Helper()
	resp, err := server.Client().Get(t.Context(), compactRevKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return resp.Kvs[0].Version
}

func put(t *testing.T, key string) int64 {
	t.Helper()
	resp, err := server.Client().Put(t.Context(), key, "v")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// TestCompactorRounds plays two apiservers: one round each, the first to
// claim a round compacts, the other adopts its count and its result.
func TestCompactorRounds(t *testing.T) {
	ctx := t.Context()
	a, b := newTestCompactor(t, nil), newTestCompactor(t, nil)
	v := compactVersion(t)

	va, revA, err := a.compactOnce(ctx, v, 0)
	if err != nil || va != v+1 {
		t.Fatalf("first round: version %d, %v", va, err)
	}
	if a.CompactRevision() != 0 {
		t.Fatal("the first round compacted")
	}
	vb, _, err := b.compactOnce(ctx, v, 0)
	if err != nil || vb != v+1 {
		t.Fatalf("losing round: version %d, %v; want %d", vb, err, v+1)
	}
	put(t, "/compactor-test/a")
	put(t, "/compactor-test/a")

	if _, _, err := a.compactOnce(ctx, va, revA); err != nil {
		t.Fatal(err)
	}
	if a.CompactRevision() != revA {
		t.Fatalf("CompactRevision = %d, want %d", a.CompactRevision(), revA)
	}
	if _, err := server.Client().Get(ctx, "/compactor-test/a", clientv3.WithRev(revA-1)); !isCompacted(err) {
		t.Fatalf("read below the compacted revision: %v", err)
	}
	if _, _, err := b.compactOnce(ctx, vb, 0); err != nil {
		t.Fatal(err)
	}
	if b.CompactRevision() != revA {
		t.Fatalf("the other compactor knows %d, want %d", b.CompactRevision(), revA)
	}
}

// TestCompactorRun drives Run with a fake clock: the second tick compacts
// to the revision seen at the first.
func TestCompactorRun(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	c := newTestCompactor(t, clk)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()

	before := put(t, "/compactor-run/a")
	deadline := time.Now().Add(10 * time.Second)
	for c.CompactRevision() < before {
		if time.Now().After(deadline) {
			t.Fatalf("no compaction past %d after ticks; at %d", before, c.CompactRevision())
		}
		if clk.HasWaiters() {
			clk.Step(time.Minute)
			put(t, "/compactor-run/a")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
