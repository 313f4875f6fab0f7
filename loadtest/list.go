package loadtest

import (
	"context"
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// list creates N config maps, then times Runs lists of each kind: a full
// consistent list (limit 0), the same from the cache (resourceVersion 0),
// and a paginated pass (limit PageSize) over all of them.
func (r *runner) list(ctx context.Context, ns string, res *Result) error {
	lc := r.cfg.List
	res.Params = map[string]int{"objects": lc.N, "runs": lc.Runs, "pageSize": lc.PageSize, "objectBytes": r.cfg.ObjectBytes}
	fill := NewRecorder()
	createConfigMaps(ctx, r.client.Kube, ns, "list", lc.N, r.cfg.Concurrency, r.cfg.ObjectBytes, fill, "create")
	if err := errorOf(ctx, fill); err != nil {
		return fmt.Errorf("creating %d config maps: %w", lc.N, err)
	}
	rec := NewRecorder()
	start := time.Now()
	for range lc.Runs {
		_ = rec.Time("full", func() error { return r.listOnce(ctx, ns, metav1.ListOptions{}, lc.N) })
		_ = rec.Time("full-rv0", func() error { return r.listOnce(ctx, ns, metav1.ListOptions{ResourceVersion: "0"}, lc.N) })
		_ = rec.Time("paginated", func() error { return r.listPages(ctx, ns, rec, lc.PageSize, lc.N) })
	}
	res.Ops = rec.Ops(time.Since(start))
	return errorOf(ctx, rec)
}

// listOnce lists ns and checks that it holds want items of the tool's.
func (r *runner) listOnce(ctx context.Context, ns string, opts metav1.ListOptions, want int) error {
	l, err := r.client.Kube.CoreV1().ConfigMaps(ns).List(ctx, opts)
	if err != nil {
		return err
	}
	if got := ownConfigMaps(l.Items); got != want {
		return fmt.Errorf("list returned %d items of the tool's, want %d", got, want)
	}
	return nil
}

// ownConfigMaps counts the tool's config maps among items. A namespace
// may hold others: a server that runs kube-controller-manager's
// root-ca-cert-publisher (capstan does) puts kube-root-ca.crt in each.
func ownConfigMaps(items []corev1.ConfigMap) int {
	n := 0
	for i := range items {
		if items[i].Labels[toolLabel] == toolLabelValue {
			n++
		}
	}
	return n
}

// listPages lists ns page by page, timing each page as "page", and checks
// that the pages hold want items. It stops after want/limit+2 pages.
func (r *runner) listPages(ctx context.Context, ns string, rec *Recorder, limit, want int) error {
	opts := metav1.ListOptions{Limit: int64(limit)}
	got := 0
	for range want/limit + 2 {
		start := time.Now()
		l, err := r.client.Kube.CoreV1().ConfigMaps(ns).List(ctx, opts)
		rec.Observe("page", time.Since(start), err)
		if err != nil {
			return err
		}
		got += ownConfigMaps(l.Items)
		if opts.Continue = l.Continue; opts.Continue == "" {
			break
		}
	}
	if got != want || opts.Continue != "" {
		return fmt.Errorf("pages returned %d items of the tool's (continue %q), want %d", got, opts.Continue, want)
	}
	return nil
}
