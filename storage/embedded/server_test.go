package embedded

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func TestStartRestartKeepsData(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var logs bytes.Buffer
	cfg := Config{Dir: dir, UnsafeNoFsync: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))}

	start := time.Now()
	s, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %v at %v", time.Since(start), s.Endpoints())
	if _, err := s.Client().Put(ctx, "/k", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	s, err = Start(ctx, cfg)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer s.Close()
	resp, err := s.Client().Get(ctx, "/k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v1" {
		t.Fatalf("after restart got %v, want /k=v1", resp.Kvs)
	}
	if logs.Len() > 0 {
		t.Errorf("etcd logged errors on a clean start, stop and restart:\n%s", logs.String())
	}
}

// TestExternalClient reaches the server through its endpoints, as a
// capstan started with --etcd-servers does.
func TestExternalClient(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, Config{Dir: t.TempDir(), UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Put(ctx, "/a", "b"); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Client().Get(ctx, "/a")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("Get = %v, %v", resp, err)
	}
}

func TestStartRequiresDir(t *testing.T) {
	if _, err := Start(context.Background(), Config{}); err == nil {
		t.Fatal("Start without Dir succeeded")
	}
}

// BenchmarkStart measures a cold start on an empty directory until the
// server serves, and its shutdown.
func BenchmarkStart(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		s, err := Start(ctx, Config{Dir: b.TempDir(), UnsafeNoFsync: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestZapLoggerForwardsErrorsOnly(t *testing.T) {
	var buf bytes.Buffer
	var closing atomic.Bool
	lg := newZapLogger(slog.New(slog.NewTextHandler(&buf, nil)), &closing).With(zap.String("member", "m1"))
	lg.Info("chatter")
	lg.Warn("more chatter")
	lg.Error("disk failed", zap.Int("attempt", 3))
	closing.Store(true)
	lg.Error("listener closed")
	out := buf.String()
	for _, want := range []string{"disk failed", "attempt=3", "member=m1", "component=etcd"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
	for _, unwanted := range []string{"chatter", "listener closed"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("log %q has %q", out, unwanted)
		}
	}
}
