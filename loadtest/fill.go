package loadtest

import (
	"context"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// settle is how long fill waits after its creates before it reads RSS.
const settle = 5 * time.Second

// fill creates config maps in one namespace until it holds each size of
// Fill in turn (at Concurrency), and reads the server's and etcd's RSS
// settle after each size is reached: one Result per size. With FillLists,
// bigLists then lists them all concurrently. The last size's Result also
// times deleting them all in one request.
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
	if len(out) == 0 {
		return out
	}
	if r.cfg.FillLists > 0 {
		out = append(out, r.bigLists(ctx, ns, have))
	}
	// deletecollection requests until the namespace is empty: past the
	// request timeout (60 s in both servers) a request ends with an error,
	// and kube-apiserver stops deleting there.
	rec := NewRecorder()
	start := time.Now()
	err := rec.Time("all deleted", func() error { return deleteAll(ctx, rec, r.client.Kube, ns) })
	last := &out[len(r.cfg.Fill)-1]
	last.Ops = append(last.Ops, rec.Ops(time.Since(start))...)
	if err != nil {
		last.Error = err.Error()
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

// bigLists times FillLists concurrent full lists of ns, which holds n
// config maps, as the Result biglists-<n>: its peak RSS is what serving
// them cost.
func (r *runner) bigLists(ctx context.Context, ns string, n int) Result {
	res := Result{Workload: fmt.Sprintf("biglists-%d", n),
		Params: map[string]int{"objects": n, "lists": r.cfg.FillLists, "objectBytes": r.cfg.ObjectBytes}}
	w := r.sampler.Start()
	rec := NewRecorder()
	start := time.Now()
	parallel(ctx, r.cfg.FillLists, r.cfg.FillLists, func(int) {
		_ = rec.Time("list", func() error { return r.listOnce(ctx, ns, metav1.ListOptions{}, n) })
	})
	res.Ops = rec.Ops(time.Since(start))
	res.Resources = w.Stop()
	if err := errorOf(ctx, rec); err != nil {
		res.Error = err.Error()
	}
	return res
}

// deleteAll sends deletecollection requests for the config maps of ns
// until a list finds none: each is timed as "deletecollection", or as
// "deletecollection cut short" when the request timeout ended it.
func deleteAll(ctx context.Context, rec *Recorder, kube kubernetes.Interface, ns string) error {
	for ctx.Err() == nil {
		start := time.Now()
		err := deleteConfigMaps(ctx, kube, ns)
		if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
			rec.Observe("deletecollection cut short", time.Since(start), nil)
		} else {
			rec.Observe("deletecollection", time.Since(start), err)
		}
		l, err := kube.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil && len(l.Items) == 0 {
			return nil
		}
	}
	return ctx.Err()
}
