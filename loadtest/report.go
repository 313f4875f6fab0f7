package loadtest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one run of the tool measured against one server.
type Report struct {
	Server      string    `json:"server"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	ContentType string    `json:"contentType"`
	Args        []string  `json:"args,omitempty"`
	Machine     Machine   `json:"machine"`
	LoadAvgEnd  string    `json:"loadAvgEnd"`
	Results     []Result  `json:"results"`
}

// Result is one workload's outcome.
type Result struct {
	Workload string         `json:"workload"`
	Params   map[string]int `json:"params,omitempty"`
	Ops      []Op           `json:"ops,omitempty"`
	// Resources are the server's, etcd's and their sum's usage while the
	// workload ran, by role.
	Resources map[string]Usage `json:"resources,omitempty"`
	// Metrics are single numbers a workload measures beside latencies.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	Error   string             `json:"error,omitempty"`
}

// Op is the summary of one kind of request (or event) within a workload.
type Op struct {
	Name string `json:"name"`
	Summary
}

// Find returns the result of workload, if any.
func (r *Report) Find(workload string) (Result, bool) {
	i := slices.IndexFunc(r.Results, func(x Result) bool { return x.Workload == workload })
	if i < 0 {
		return Result{}, false
	}
	return r.Results[i], true
}

// Op returns the named op of r, if any.
func (r Result) Op(name string) (Op, bool) {
	i := slices.IndexFunc(r.Ops, func(o Op) bool { return o.Name == name })
	if i < 0 {
		return Op{}, false
	}
	return r.Ops[i], true
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(out io.Writer) error {
	fmt.Fprintf(out, "server %s, %s, %s, load average %s -> %s, %.0fs\n",
		r.Server, r.ContentType, r.Machine.Summary(), r.Machine.LoadAvg, r.LoadAvgEnd, r.Seconds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\top\tcount\terrors\tper s\tp50 ms\tp90 ms\tp99 ms\tp99.9 ms\tmax ms\t")
	for _, res := range r.Results {
		for _, op := range res.Ops {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", res.Workload, op.Name,
				op.Count, op.Errors, op.PerSecond, op.P50Ms, op.P90Ms, op.P99Ms, op.P999Ms, op.MaxMs)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\trole\tpeak RSS MiB\tend RSS MiB\tCPU s\t")
	for _, res := range r.Results {
		for _, role := range roles(res.Resources) {
			u := res.Resources[role]
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.2f\t\n", res.Workload, role, mib(u.PeakRSSBytes), mib(u.RSSBytes), u.CPUSeconds)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeMetricsAndErrors(out, r.Results)
}

func writeMetricsAndErrors(out io.Writer, results []Result) error {
	for _, res := range results {
		keys := make([]string, 0, len(res.Metrics))
		for k := range res.Metrics {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%.4g", k, res.Metrics[k]))
		}
		if len(parts) > 0 {
			fmt.Fprintf(out, "%s: %s\n", res.Workload, strings.Join(parts, " "))
		}
		if res.Error != "" {
			fmt.Fprintf(out, "%s: ERROR %s\n", res.Workload, res.Error)
		}
	}
	return nil
}

// roles orders server, etcd, sum first, then any other.
func roles(m map[string]Usage) []string {
	var out []string
	for _, r := range []string{"server", "etcd", SumRole} {
		if _, ok := m[r]; ok {
			out = append(out, r)
		}
	}
	for r := range m {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
