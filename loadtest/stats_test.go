package loadtest

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func msList(vals ...int) []time.Duration {
	out := make([]time.Duration, len(vals))
	for i, v := range vals {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", msList(7), 0.999, 7 * time.Millisecond},
		{"median of odd", msList(1, 2, 3), 0.5, 2 * time.Millisecond},
		{"median of even is the lower", msList(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p50 of 1..100", hundred, 0.5, 50 * time.Millisecond},
		{"p99 of 1..100", hundred, 0.99, 99 * time.Millisecond},
		{"p99.9 of 1..100 is the max", hundred, 0.999, 100 * time.Millisecond},
		{"p100", hundred, 1, 100 * time.Millisecond},
		{"tiny q is the min", hundred, 0.0001, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.q); got != tc.want {
				t.Errorf("Percentile(q=%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	samples := make([]time.Duration, 1000)
	for i := range samples {
		samples[i] = time.Duration(i+1) * time.Millisecond
	}
	rand.Shuffle(len(samples), func(i, j int) { samples[i], samples[j] = samples[j], samples[i] })
	s := Summarize(samples, 3, 2*time.Second)
	want := Summary{Count: 1000, Errors: 3, Seconds: 2, PerSecond: 500,
		MinMs: 1, MeanMs: 500.5, P50Ms: 500, P90Ms: 900, P99Ms: 990, P999Ms: 999, MaxMs: 1000}
	if s != want {
		t.Errorf("Summarize =\n%+v, want\n%+v", s, want)
	}
	if empty := Summarize(nil, 1, 0); empty != (Summary{Errors: 1}) {
		t.Errorf("Summarize(nil) = %+v", empty)
	}
}

func TestRecorder(t *testing.T) {
	r := NewRecorder()
	r.Observe("b", 2*time.Millisecond, nil)
	r.Observe("a", time.Millisecond, nil)
	boom := errors.New("boom")
	r.Observe("b", time.Hour, boom)
	r.Observe("b", 4*time.Millisecond, nil)
	ops := r.Ops(time.Second)
	if len(ops) != 2 || ops[0].Name != "b" || ops[1].Name != "a" {
		t.Fatalf("ops = %+v, want b then a", ops)
	}
	if b := ops[0].Summary; b.Count != 2 || b.Errors != 1 || b.MaxMs != 4 || b.PerSecond != 2 {
		t.Errorf("b = %+v: the failed hour must count as an error, not a sample", b)
	}
	if !errors.Is(r.FirstError(), boom) {
		t.Errorf("FirstError = %v", r.FirstError())
	}
}

func TestDeliveries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	written := []time.Time{at(10), at(20), {}} // the third write failed
	arrivals := [][]time.Time{
		{at(15), at(18), {}}, // the second came before its write's response
		{at(12), {}, {}},     // the second never came
	}
	delays, missing, early := deliveries(written, arrivals)
	if want := msList(5, 0, 2); !equalDurations(delays, want) || missing != 1 || early != 1 {
		t.Errorf("deliveries = %v, missing %d, early %d; want %v, 1, 1", delays, missing, early, want)
	}
	sent := onlyWritten([]time.Time{at(1), at(2), at(3)}, written)
	if !sent[2].IsZero() || !sent[0].Equal(at(1)) {
		t.Errorf("onlyWritten = %v: the failed write must be zero", sent)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMedianIndex(t *testing.T) {
	ds := msList(30, 10, 20)
	if i := medianIndex(ds); i != 2 {
		t.Errorf("medianIndex(30,10,20) = %d, want 2", i)
	}
	if i := medianIndex(msList(40, 10, 30, 20)); i != 3 {
		t.Errorf("medianIndex of four = %d, want 3 (the lower median, 20)", i)
	}
	if ds[0] != 30*time.Millisecond {
		t.Error("medianIndex reordered its input")
	}
}
