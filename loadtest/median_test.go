package loadtest

import (
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{9, 9, 1}, 9},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestMedianReport: figures are the rounds' medians, field by field; an
// op or workload some round lacks comes from those that have it; errors
// name their round.
func TestMedianReport(t *testing.T) {
	round := func(perSecond, p99 float64, rss uint64, metric float64, extra bool, errText string) *Report {
		res := Result{Workload: "crud", Ops: []Op{{Name: "create", Summary: Summary{Count: 100, PerSecond: perSecond, P99Ms: p99}}},
			Resources: map[string]Usage{"server": {PeakRSSBytes: rss}}, Metrics: map[string]float64{"requestsPerSecond": metric}, Error: errText}
		if extra {
			res.Ops = append(res.Ops, Op{Name: "get", Summary: Summary{Count: 7}})
		}
		return &Report{Server: "s", Results: []Result{res}}
	}
	rep, err := MedianReport([]*Report{
		round(100, 9, 30, 1, false, ""), round(300, 1, 10, 3, true, "boom"), round(200, 5, 20, 2, false, ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := rep.Find("crud")
	create, _ := res.Op("create")
	if create.PerSecond != 200 || create.P99Ms != 5 || create.Count != 100 {
		t.Errorf("create = %+v, want 200 per s, p99 5", create.Summary)
	}
	if get, ok := res.Op("get"); !ok || get.Count != 7 {
		t.Errorf("get = %+v, %v: want the one round's", get, ok)
	}
	if res.Resources["server"].PeakRSSBytes != 20 || res.Metrics["requestsPerSecond"] != 2 {
		t.Errorf("resources %+v metrics %v, want the medians", res.Resources, res.Metrics)
	}
	if !strings.Contains(res.Error, "round 2: boom") {
		t.Errorf("error %q does not name round 2", res.Error)
	}
	if _, err := MedianReport(nil); err == nil {
		t.Error("no reports: no error")
	}
}
