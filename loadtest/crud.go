package loadtest

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// crud takes N config maps, each through create, get, update and delete,
// on C workers: 4N requests.
func (r *runner) crud(ctx context.Context, ns string, res *Result) error {
	n, c := r.cfg.CRUD.N, r.cfg.CRUD.C
	res.Params = map[string]int{"objects": n, "concurrency": c, "objectBytes": r.cfg.ObjectBytes}
	cms := r.client.Kube.CoreV1().ConfigMaps(ns)
	rec := NewRecorder()
	start := time.Now()
	parallel(ctx, n, c, func(i int) {
		cm := configMap(ns, fmt.Sprintf("crud-%07d", i), r.cfg.ObjectBytes)
		if rec.Time("create", func() error { _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); return err }) != nil {
			return
		}
		if rec.Time("get", func() (err error) { cm, err = cms.Get(ctx, cm.Name, metav1.GetOptions{}); return err }) != nil {
			return
		}
		cm.Data["updated"] = "true"
		_ = rec.Time("update", func() error { _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); return err })
		_ = rec.Time("delete", func() error { return cms.Delete(ctx, cm.Name, metav1.DeleteOptions{}) })
	})
	wall := time.Since(start)
	res.Ops = rec.Ops(wall)
	var total int
	for _, op := range res.Ops {
		total += op.Count
	}
	res.Metrics = map[string]float64{"requestsPerSecond": float64(total) / wall.Seconds()}
	return errorOf(ctx, rec)
}

// errorOf is the first error a workload saw, or why it was cut short.
func errorOf(ctx context.Context, rec *Recorder) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := rec.FirstError(); err != nil {
		return fmt.Errorf("first error: %w", err)
	}
	return nil
}
