package garbagecollector_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/capstan-io/capstan/controlplane/controllers/garbagecollector"
	"github.com/capstan-io/capstan/internal/testkit"
)

// BenchmarkGraphMemory reports the live heap a collector holds per object
// once its informers have filled the graph with 30,000 config maps that
// have no owners: a second collector, next to the server's own, is started
// over them and the live heap read before and after.
func BenchmarkGraphMemory(b *testing.B) {
	const objects = 30000
	s := testkit.StartServer(b)
	cfg := *s.Config
	cfg.QPS, cfg.Burst = -1, 0
	client := kubernetes.NewForConfigOrDie(&cfg)
	ctx := context.Background()
	var wg sync.WaitGroup
	const writers = 16
	for w := range writers {
		wg.Go(func() {
			for i := w; i < objects; i += writers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}, Data: map[string]string{"k": "v"}}
				if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	b.ResetTimer()
	for range b.N {
		before := liveHeap()
		meta := metadata.NewForConfigOrDie(&cfg)
		disco := discovery.NewDiscoveryClientForConfigOrDie(&cfg)
		c, err := garbagecollector.New(garbagecollector.Config{Metadata: meta, Discovery: disco,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); c.Run(rctx, 1) }()
		for deadline := time.Now().Add(5 * time.Minute); garbagecollector.GraphNodes(c) < objects; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("the graph has %d nodes after 5 minutes, want %d", garbagecollector.GraphNodes(c), objects)
			}
		}
		time.Sleep(time.Second) // the last events of other resources
		after := liveHeap()
		b.ReportMetric(float64(after-before)/objects, "B/object")
		runtime.KeepAlive(c)
		cancel()
		<-done
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
