package loadtest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// watch opens Watchers watches on ns from its current resourceVersion,
// then creates Writes config maps one after the other. Every watcher must
// see every create. Two latencies per watcher and event: "deliver", from
// the create's response to the event reaching the watcher (0 if the event
// came first: counted as early), and "end-to-end", from sending the create.
func (r *runner) watch(ctx context.Context, ns string, res *Result) error {
	wc := r.cfg.Watch
	res.Params = map[string]int{"watchers": wc.Watchers, "writes": wc.Writes, "objectBytes": r.cfg.ObjectBytes}
	rec := NewRecorder()
	ws, err := r.openWatches(ctx, ns, wc.Watchers, wc.Writes, rec)
	if err != nil {
		return err
	}
	defer ws.cancel()
	res.Metrics = map[string]float64{}
	return r.writeAndDeliver(ctx, ns, ws, wc.Writes, wc.Timeout, rec, res)
}

// watchers holds many watches open: the server's memory before and with
// N watches open on one namespace (read as settledMemory reads it), then
// Writes creates that every watch must deliver, as in watch.
func (r *runner) watchers(ctx context.Context, ns string, res *Result) error {
	hc := r.cfg.Watchers
	res.Params = map[string]int{"watchers": hc.N, "writes": hc.Writes, "objectBytes": r.cfg.ObjectBytes}
	before, err := r.settledMemory(ctx, settle, "Before")
	if err != nil {
		return err
	}
	rec := NewRecorder()
	ws, err := r.openWatches(ctx, ns, hc.N, hc.Writes, rec)
	if err != nil {
		return err
	}
	defer ws.cancel()
	held, err := r.settledMemory(ctx, settle, "Watching")
	if err != nil {
		return err
	}
	res.Metrics = map[string]float64{}
	before.put(res.Metrics, "Before")
	held.put(res.Metrics, "Watching")
	held.perItem(res.Metrics, before, hc.N, "PerWatcherKiB")
	return r.writeAndDeliver(ctx, ns, ws, hc.Writes, r.cfg.Watch.Timeout, rec, res)
}

// watchSet is open watches, each recording when the ADDED event of
// watch-<i> arrives.
type watchSet struct {
	arrivals [][]time.Time
	wg       sync.WaitGroup
	cancel   func()
}

// openWatches opens n watches of ns from its current resourceVersion, on
// the run's Concurrency workers, each timed as "open" (until the
// response's headers).
func (r *runner) openWatches(ctx context.Context, ns string, n, writes int, rec *Recorder) (*watchSet, error) {
	cms := r.client.Kube.CoreV1().ConfigMaps(ns)
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	ws := &watchSet{arrivals: make([][]time.Time, n), cancel: cancel}
	parallel(ctx, n, r.cfg.Concurrency, func(i int) {
		var w watch.Interface
		err := rec.Time("open", func() (err error) {
			w, err = cms.Watch(wctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
			return err
		})
		if err != nil {
			return
		}
		ws.arrivals[i] = make([]time.Time, writes)
		ws.wg.Go(func() { receive(w, ws.arrivals[i]) })
	})
	if err := errorOf(ctx, rec); err != nil {
		cancel()
		ws.wg.Wait()
		return nil, fmt.Errorf("opening %d watches: %w", n, err)
	}
	return ws, nil
}

// writeAndDeliver creates writes config maps one after the other and
// waits (at most timeout after the last) until every watch of ws has
// seen them all; it fills res's ops with rec's and the delivery
// latencies, and its metrics with the missed and early events.
func (r *runner) writeAndDeliver(ctx context.Context, ns string, ws *watchSet, writes int, timeout time.Duration, rec *Recorder, res *Result) error {
	cms := r.client.Kube.CoreV1().ConfigMaps(ns)
	sent, written := make([]time.Time, writes), make([]time.Time, writes)
	start := time.Now()
	for i := range written {
		cm := configMap(ns, fmt.Sprintf("watch-%07d", i), r.cfg.ObjectBytes)
		sent[i] = time.Now()
		if rec.Time("write", func() error { _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); return err }) == nil {
			written[i] = time.Now()
		}
	}
	waitOrCancel(&ws.wg, timeout, ws.cancel)
	wall := time.Since(start)
	deliver, missing, early := deliveries(written, ws.arrivals)
	endToEnd, _, _ := deliveries(onlyWritten(sent, written), ws.arrivals)
	res.Ops = append(rec.Ops(wall),
		Op{Name: "deliver", Summary: Summarize(deliver, missing, wall)},
		Op{Name: "end-to-end", Summary: Summarize(endToEnd, missing, wall)})
	res.Metrics["missingEvents"], res.Metrics["earlyEvents"] = float64(missing), float64(early)
	if missing > 0 {
		return fmt.Errorf("%d of %d events never arrived", missing, len(ws.arrivals)*writes)
	}
	return errorOf(ctx, rec)
}

// receive records when each watch-<i> ADDED event arrives, until all have
// or the watch ends.
func receive(w watch.Interface, arrivals []time.Time) {
	defer w.Stop()
	left := len(arrivals)
	for ev := range w.ResultChan() {
		now := time.Now()
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || !ok {
			continue
		}
		i, err := strconv.Atoi(strings.TrimPrefix(cm.Name, "watch-"))
		if err != nil || i < 0 || i >= len(arrivals) || !arrivals[i].IsZero() {
			continue
		}
		arrivals[i] = now
		if left--; left == 0 {
			return
		}
	}
}

// waitOrCancel waits for wg, calling cancel (and then waiting) if that
// takes longer than timeout.
func waitOrCancel(wg *sync.WaitGroup, timeout time.Duration, cancel func()) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		cancel()
		<-done
	}
}

// onlyWritten is sent, with the writes that failed zeroed.
func onlyWritten(sent, written []time.Time) []time.Time {
	out := make([]time.Time, len(sent))
	for i := range sent {
		if !written[i].IsZero() {
			out[i] = sent[i]
		}
	}
	return out
}

// deliveries returns each event's delay after its write's time (0 when it
// arrived first, counted in early), and how many never arrived. Writes
// with a zero time (failed) are not counted.
func deliveries(written []time.Time, arrivals [][]time.Time) (delays []time.Duration, missing, early int) {
	for _, got := range arrivals {
		for i, at := range got {
			switch {
			case written[i].IsZero():
			case at.IsZero():
				missing++
			case at.Before(written[i]):
				early++
				delays = append(delays, 0)
			default:
				delays = append(delays, at.Sub(written[i]))
			}
		}
	}
	return delays, missing, early
}
