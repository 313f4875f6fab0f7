package loadtest

import (
	"context"
	"fmt"
	"time"
)

// settle is how long fill waits after its creates before it reads RSS.
const settle = 5 * time.Second

// fill creates config maps in one namespace until it holds each size of
// Fill in turn (at Concurrency), and reads the server's and etcd's RSS
// settle after each size is reached: one Result per size. The last one
// also times deleting them all in one request.
func (r *runner) fill(ctx context.Context) []Result {
	ns := r.runID + "-fill"
	if err := createNamespace(ctx, r.client.Kube, ns); err != nil {
		return []Result{{Workload: "fill", Error: fmt.Sprintf("creating namespace %s: %v", ns, err)}}
	}
	defer r.cleanup(ctx, ns)
	var out []Result
	have := 0
	for _, n := range r.cfg.Fill {
		res := Result{Workload: fmt.Sprintf("fill-%d", n),
			Params: map[string]int{"objects": n, "concurrency": r.cfg.Concurrency, "objectBytes": r.cfg.ObjectBytes}}
		w := r.sampler.Start()
		rec := NewRecorder()
		start := time.Now()
		createConfigMaps(ctx, r.client.Kube, ns, fmt.Sprintf("fill%d", n), n-have, r.cfg.Concurrency, r.cfg.ObjectBytes, rec, "create")
		res.Ops = rec.Ops(time.Since(start))
		err := errorOf(ctx, rec)
		if err == nil {
			err = sleep(ctx, settle)
		}
		res.Resources = w.Stop()
		if err != nil {
			res.Error = err.Error()
			return append(out, res)
		}
		out = append(out, res)
		have = n
	}
	if len(out) > 0 {
		rec := NewRecorder()
		start := time.Now()
		err := rec.Time("deletecollection", func() error { return deleteConfigMaps(ctx, r.client.Kube, ns) })
		last := &out[len(out)-1]
		last.Ops = append(last.Ops, rec.Ops(time.Since(start))...)
		if err != nil {
			last.Error = err.Error()
		}
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
