package metrics

import (
	"maps"
	"sync"
	"testing"
	"time"
)

// TestTimingSeries: a bucket counts the nanoseconds the value spent at or
// under its bound (cumulatively, as Prometheus's buckets), the sum is the
// value integrated over nanoseconds, and a ratio series observes its
// numerator over its denominator.
func TestTimingSeries(t *testing.T) {
	f := &timingFamily{bounds: []float64{0, 0.5, 1}}
	var mu sync.Mutex
	r := newRatioSeries(f, &mu, "x")
	t0 := time.Unix(1000, 0)
	r.last = t0
	at := func(ns int) time.Time { return t0.Add(time.Duration(ns)) }
	r.setLocked(at(10), 1)                     // 0 for 10ns
	r.setDenominatorLocked(at(30), 4)          // 1 for 20ns
	r.setLocked(at(30), 1)                     // unchanged: nothing happens
	r.setLocked(at(70), 2)                     // 0.25 for 40ns
	r.setDenominatorLocked(at(70), 0)          // taken as 1
	count, sum, buckets := r.snapshot(at(100)) // 2 for 30ns
	if count != 100 {
		t.Errorf("count %d ns, want 100", count)
	}
	if want := 1.0*20 + 0.25*40 + 2*30; sum != want {
		t.Errorf("sum %v, want %v", sum, want)
	}
	if want := map[float64]uint64{0: 10, 0.5: 50, 1: 70}; !maps.Equal(buckets, want) {
		t.Errorf("buckets %v, want %v", buckets, want)
	}
	if len(f.series) != 1 || f.series[0].labelValues[0] != "x" {
		t.Errorf("the family holds %d series", len(f.series))
	}
}
