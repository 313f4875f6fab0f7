package loadtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reads measures read throughput: N config maps, then C workers send GETs
// of random ones for Duration, then C workers list the namespace whole
// (a consistent list, as controllers' informers and kubectl send) for
// Duration. Throughput is requests answered per second of each phase.
func (r *runner) reads(ctx context.Context, ns string, res *Result) error {
	rc := r.cfg.Reads
	res.Params = map[string]int{"objects": rc.N, "concurrency": rc.C, "seconds": int(rc.Duration.Seconds()), "objectBytes": r.cfg.ObjectBytes}
	fill := NewRecorder()
	createConfigMaps(ctx, r.client.Kube, ns, "reads", rc.N, r.cfg.Concurrency, r.cfg.ObjectBytes, fill, "create")
	if err := errorOf(ctx, fill); err != nil {
		return fmt.Errorf("creating %d config maps: %w", rc.N, err)
	}
	cms := r.client.Kube.CoreV1().ConfigMaps(ns)
	rec := NewRecorder()
	res.Metrics = map[string]float64{}
	phases := []struct {
		op, metric string
		do         func() error
	}{
		{"get", "getsPerSecond", func() error {
			_, err := cms.Get(ctx, fmt.Sprintf("reads-%07d", rand.IntN(rc.N)), metav1.GetOptions{})
			return err
		}},
		{"list", "listsPerSecond", func() error { return r.listOnce(ctx, ns, metav1.ListOptions{}, rc.N) }},
	}
	start := time.Now()
	for _, p := range phases {
		n, wall := forDuration(ctx, rc.C, rc.Duration, func() { _ = rec.Time(p.op, p.do) })
		res.Metrics[p.metric] = float64(n) / wall.Seconds()
	}
	res.Ops = rec.Ops(time.Since(start))
	return errorOf(ctx, rec)
}

// forDuration runs f on workers goroutines until d has passed (each
// finishes the call it is in) and returns how many calls ran and for how
// long.
func forDuration(ctx context.Context, workers int, d time.Duration, f func()) (calls int, wall time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			n := 0
			for ctx.Err() == nil {
				f()
				n++
			}
			mu.Lock()
			calls += n
			mu.Unlock()
		})
	}
	wg.Wait()
	return calls, time.Since(start)
}
