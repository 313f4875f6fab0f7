package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// timingFamily is a family of kube's timing histograms (component-base's
// TimingHistogram): each series is a gauge observed "at the end of every
// nanosecond". A bucket counts the nanoseconds the value spent at or
// under its bound, the count is the nanoseconds observed, the sum the
// value integrated over them. Kube's APF utilization families are ratios
// of this kind.
//
// Written here rather than taken from component-base: a series is
// updated on every request under a lock its owner already holds (a
// level's four series under one), which keeps the cost of a request to
// one clock read and a few additions.
type timingFamily struct {
	desc   *prometheus.Desc
	bounds []float64
	mu     sync.Mutex // guards series
	series []*timingSeries
}

// newTimingFamily defines and registers a family.
func newTimingFamily(name, help string, bounds []float64, constLabels prometheus.Labels, labels ...string) *timingFamily {
	f := &timingFamily{desc: prometheus.NewDesc(name, help, labels, constLabels), bounds: bounds}
	register(f)
	return f
}

func (f *timingFamily) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }

func (f *timingFamily) Collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	series := slices.Clone(f.series)
	f.mu.Unlock()
	now := time.Now()
	for _, s := range series {
		count, sum, buckets := s.snapshot(now)
		ch <- prometheus.MustNewConstHistogram(f.desc, count, sum, buckets, s.labelValues...)
	}
}

// timingSeries is one series of a family, starting at 0 now. Its owner
// updates it holding mu, which scrapes take too.
type timingSeries struct {
	mu          *sync.Mutex
	bounds      []float64
	labelValues []string
	value       float64
	last        time.Time
	ns          []uint64 // nanoseconds in each bucket; the last is +Inf's
	sum         float64  // value × nanoseconds, compensated (Kahan):
	sumErr      float64  // the low-order part lost from sum
}

func (f *timingFamily) newSeries(mu *sync.Mutex, labelValues ...string) *timingSeries {
	s := &timingSeries{mu: mu, bounds: f.bounds, labelValues: labelValues, last: time.Now(), ns: make([]uint64, len(f.bounds)+1)}
	f.mu.Lock()
	f.series = append(f.series, s)
	f.mu.Unlock()
	return s
}

// setLocked changes the value at now; the old one held until then.
func (s *timingSeries) setLocked(now time.Time, v float64) {
	s.advanceLocked(now)
	s.value = v
}

// advanceLocked accounts the time since the last change to the value.
func (s *timingSeries) advanceLocked(now time.Time) {
	dt := now.Sub(s.last)
	if dt <= 0 {
		return
	}
	s.last = now
	i := 0
	for i < len(s.bounds) && s.value > s.bounds[i] {
		i++
	}
	s.ns[i] += uint64(dt)
	y := s.value*float64(dt) - s.sumErr
	t := s.sum + y
	s.sumErr = (t - s.sum) - y
	s.sum = t
}

// snapshot is the series' count, sum and cumulative buckets at now.
func (s *timingSeries) snapshot(now time.Time) (uint64, float64, map[float64]uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(now)
	buckets := make(map[float64]uint64, len(s.bounds))
	var count uint64
	for i, b := range s.bounds {
		count += s.ns[i]
		buckets[b] = count
	}
	return count + s.ns[len(s.bounds)], s.sum, buckets
}

// ratioSeries is a timing series of a numerator over a denominator, as
// kube's TimingRatioHistogram; updated under its series' lock.
type ratioSeries struct {
	*timingSeries
	num, den float64
}

func newRatioSeries(f *timingFamily, mu *sync.Mutex, labelValues ...string) *ratioSeries {
	return &ratioSeries{timingSeries: f.newSeries(mu, labelValues...), den: 1}
}

// setLocked changes the numerator; an unchanged one costs nothing.
func (r *ratioSeries) setLocked(now time.Time, num float64) {
	if num != r.num {
		r.num = num
		r.timingSeries.setLocked(now, r.num/r.den)
	}
}

// setDenominatorLocked changes the denominator; a non-positive one is
// taken as 1, so that the ratio stays finite.
func (r *ratioSeries) setDenominatorLocked(now time.Time, den float64) {
	if den <= 0 {
		den = 1
	}
	if den != r.den {
		r.den = den
		r.timingSeries.setLocked(now, r.num/r.den)
	}
}
