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
	cms := r.client.Kube.CoreV1().ConfigMaps(ns)
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	arrivals := make([][]time.Time, wc.Watchers)
	var wg sync.WaitGroup
	for i := range wc.Watchers {
		w, err := cms.Watch(wctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
		if err != nil {
			return fmt.Errorf("watch %d: %w", i, err)
		}
		arrivals[i] = make([]time.Time, wc.Writes)
		wg.Go(func() { receive(w, arrivals[i]) })
	}
	rec := NewRecorder()
	sent, written := make([]time.Time, wc.Writes), make([]time.Time, wc.Writes)
	start := time.Now()
	for i := range written {
		cm := configMap(ns, fmt.Sprintf("watch-%07d", i), r.cfg.ObjectBytes)
		sent[i] = time.Now()
		if rec.Time("write", func() error { _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); return err }) == nil {
			written[i] = time.Now()
		}
	}
	waitOrCancel(&wg, wc.Timeout, cancel)
	wall := time.Since(start)
	deliver, missing, early := deliveries(written, arrivals)
	endToEnd, _, _ := deliveries(onlyWritten(sent, written), arrivals)
	res.Ops = append(rec.Ops(wall),
		Op{Name: "deliver", Summary: Summarize(deliver, missing, wall)},
		Op{Name: "end-to-end", Summary: Summarize(endToEnd, missing, wall)})
	res.Metrics = map[string]float64{"missingEvents": float64(missing), "earlyEvents": float64(early)}
	if missing > 0 {
		return fmt.Errorf("%d of %d events never arrived", missing, wc.Watchers*wc.Writes)
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
