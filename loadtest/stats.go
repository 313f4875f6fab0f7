// Package loadtest drives a Kubernetes API server through client-go with a
// few fixed workloads and measures latency, throughput and the server's
// memory and CPU. cmd/capstan-load is its command; bench/compare.sh runs it
// against kube-apiserver and capstan on the same etcd.
package loadtest

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Summary describes the latencies of one operation: how many, how fast,
// and their distribution in milliseconds.
type Summary struct {
	Count     int     `json:"count"`
	Errors    int     `json:"errors"`
	Seconds   float64 `json:"seconds"`   // wall time the operations ran in
	PerSecond float64 `json:"perSecond"` // successful operations per second of wall time
	MinMs     float64 `json:"minMs"`
	MeanMs    float64 `json:"meanMs"`
	P50Ms     float64 `json:"p50Ms"`
	P90Ms     float64 `json:"p90Ms"`
	P99Ms     float64 `json:"p99Ms"`
	P999Ms    float64 `json:"p999Ms"`
	MaxMs     float64 `json:"maxMs"`
}

// Percentile returns the nearest-rank q-quantile (0 < q <= 1) of sorted:
// the smallest sample such that at least q of all samples are at or below
// it. It returns 0 for no samples.
func Percentile(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(q*float64(n))) - 1
	return sorted[max(0, min(rank, n-1))]
}

// Summarize describes samples (which it sorts in place), errors and the
// wall time they took.
func Summarize(samples []time.Duration, errors int, wall time.Duration) Summary {
	s := Summary{Count: len(samples), Errors: errors, Seconds: wall.Seconds()}
	if wall > 0 {
		s.PerSecond = float64(len(samples)) / wall.Seconds()
	}
	if len(samples) == 0 {
		return s
	}
	slices.Sort(samples)
	var total time.Duration
	for _, d := range samples {
		total += d
	}
	s.MinMs = ms(samples[0])
	s.MeanMs = ms(total / time.Duration(len(samples)))
	s.P50Ms = ms(Percentile(samples, 0.50))
	s.P90Ms = ms(Percentile(samples, 0.90))
	s.P99Ms = ms(Percentile(samples, 0.99))
	s.P999Ms = ms(Percentile(samples, 0.999))
	s.MaxMs = ms(samples[len(samples)-1])
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Recorder collects latencies per operation from many goroutines.
type Recorder struct {
	mu      sync.Mutex // guards the fields below
	order   []string
	samples map[string][]time.Duration
	errors  map[string]int
	first   error
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{samples: map[string][]time.Duration{}, errors: map[string]int{}}
}

// Observe records one operation: its latency if it succeeded, an error if not.
func (r *Recorder) Observe(op string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.samples[op]; !ok {
		r.order = append(r.order, op)
		r.samples[op] = nil
	}
	if err != nil {
		r.errors[op]++
		if r.first == nil {
			r.first = err
		}
		return
	}
	r.samples[op] = append(r.samples[op], d)
}

// Time runs f and records its latency under op.
func (r *Recorder) Time(op string, f func() error) error {
	start := time.Now()
	err := f()
	r.Observe(op, time.Since(start), err)
	return err
}

// FirstError is the first error observed, if any.
func (r *Recorder) FirstError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// Ops summarizes every operation, in the order first seen, over wall time.
func (r *Recorder) Ops(wall time.Duration) []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	ops := make([]Op, 0, len(r.order))
	for _, name := range r.order {
		ops = append(ops, Op{Name: name, Summary: Summarize(slices.Clone(r.samples[name]), r.errors[name], wall)})
	}
	return ops
}
