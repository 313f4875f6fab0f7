package loadtest

import (
	"fmt"
	"slices"
	"strings"
)

// MedianReport merges the reports of several rounds against one server
// into one whose every figure is the median of the rounds' (the middle
// one, or the mean of the two middle ones): each op's summary field by
// field, each metric, each role's usage. A workload, op, metric or role
// some round lacks takes the median of the rounds that have it; a
// workload's error is kept if any round had one, naming the round. The
// first report gives the rest (server, machine, arguments).
func MedianReport(reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("no reports")
	}
	out := *reps[0]
	out.Results = nil
	out.Args = append(slices.Clone(reps[0].Args), fmt.Sprintf("(median of %d rounds)", len(reps)))
	var workloads []string
	for _, rep := range reps {
		for _, res := range rep.Results {
			if !slices.Contains(workloads, res.Workload) {
				workloads = append(workloads, res.Workload)
			}
		}
	}
	for _, w := range workloads {
		var rounds []Result
		var errs []string
		for i, rep := range reps {
			if res, ok := rep.Find(w); ok {
				rounds = append(rounds, res)
				if res.Error != "" {
					errs = append(errs, fmt.Sprintf("round %d: %s", i+1, res.Error))
				}
			}
		}
		merged := medianResult(rounds)
		merged.Error = strings.Join(errs, "; ")
		out.Results = append(out.Results, merged)
	}
	return &out, nil
}

// medianResult merges one workload's results of several rounds.
func medianResult(rounds []Result) Result {
	out := Result{Workload: rounds[0].Workload, Params: rounds[0].Params}
	var ops []string
	metrics := map[string][]float64{}
	usages := map[string][]Usage{}
	for _, r := range rounds {
		for _, op := range r.Ops {
			if !slices.Contains(ops, op.Name) {
				ops = append(ops, op.Name)
			}
		}
		for k, v := range r.Metrics {
			metrics[k] = append(metrics[k], v)
		}
		for role, u := range r.Resources {
			usages[role] = append(usages[role], u)
		}
	}
	for _, name := range ops {
		var sums []Summary
		for _, r := range rounds {
			if op, ok := r.Op(name); ok {
				sums = append(sums, op.Summary)
			}
		}
		out.Ops = append(out.Ops, Op{Name: name, Summary: medianSummary(sums)})
	}
	if len(metrics) > 0 {
		out.Metrics = map[string]float64{}
		for k, vs := range metrics {
			out.Metrics[k] = median(vs)
		}
	}
	if len(usages) > 0 {
		out.Resources = map[string]Usage{}
		for role, us := range usages {
			out.Resources[role] = Usage{
				PeakRSSBytes: uint64(median(project(us, func(u Usage) float64 { return float64(u.PeakRSSBytes) }))),
				RSSBytes:     uint64(median(project(us, func(u Usage) float64 { return float64(u.RSSBytes) }))),
				CPUSeconds:   median(project(us, func(u Usage) float64 { return u.CPUSeconds })),
			}
		}
	}
	return out
}

// medianSummary is the field-by-field median of sums.
func medianSummary(sums []Summary) Summary {
	f := func(get func(Summary) float64) float64 { return median(project(sums, get)) }
	return Summary{
		Count:     int(f(func(s Summary) float64 { return float64(s.Count) })),
		Errors:    int(f(func(s Summary) float64 { return float64(s.Errors) })),
		Seconds:   f(func(s Summary) float64 { return s.Seconds }),
		PerSecond: f(func(s Summary) float64 { return s.PerSecond }),
		MinMs:     f(func(s Summary) float64 { return s.MinMs }),
		MeanMs:    f(func(s Summary) float64 { return s.MeanMs }),
		P50Ms:     f(func(s Summary) float64 { return s.P50Ms }),
		P90Ms:     f(func(s Summary) float64 { return s.P90Ms }),
		P99Ms:     f(func(s Summary) float64 { return s.P99Ms }),
		P999Ms:    f(func(s Summary) float64 { return s.P999Ms }),
		MaxMs:     f(func(s Summary) float64 { return s.MaxMs }),
	}
}

func project[T any](xs []T, f func(T) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// median of vs (sorted in place): the middle value, or the mean of the
// two middle ones.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}
