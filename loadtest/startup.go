package loadtest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// startup is what starting the server Runs times measured, and the last
// server, left running for the other workloads.
type startup struct {
	result Result
	server *Server
	stops  []time.Duration
}

// startServers starts the server command Runs times, timing process start
// to /readyz 200; it stops all but the last at once, timing the graceful
// stop. Its resources are those of the run with the median start time:
// the server's RSS when ready and CPU until then, and etcd's meanwhile.
func (r *runner) startServers(ctx context.Context) *startup {
	runs := r.cfg.Start.Runs
	st := &startup{result: Result{Workload: "startup", Params: map[string]int{"runs": runs}}}
	var ready []time.Duration
	var usages []map[string]Usage
	for run := 1; run <= runs; run++ {
		srv, d, usage, err := r.startOne(ctx, run)
		if err != nil {
			st.result.Error = fmt.Sprintf("run %d: %v", run, err)
			if srv != nil {
				_, _ = srv.Stop(r.cfg.Start.StopTimeout)
			}
			return st
		}
		r.log.Info("server ready", "run", run, "after", d.Round(time.Millisecond))
		ready, usages = append(ready, d), append(usages, usage)
		if run == runs {
			st.server = srv
			break
		}
		sd, err := srv.Stop(r.cfg.Start.StopTimeout)
		if err != nil {
			r.log.Warn("stopping the server", "run", run, "err", err)
		}
		st.stops = append(st.stops, sd)
	}
	st.result.Resources = usages[medianIndex(ready)]
	st.result.Ops = []Op{{Name: "ready", Summary: Summarize(ready, 0, 0)}}
	return st
}

// startOne starts run number run and waits until it is ready.
func (r *runner) startOne(ctx context.Context, run int) (*Server, time.Duration, map[string]Usage, error) {
	sc := r.cfg.Start
	url := expandRun([]string{sc.ReadyURL}, run)[0]
	if !r.cfg.AllowRemote {
		if err := CheckLoopback(url); err != nil {
			return nil, 0, nil, err
		}
	}
	srv, err := StartServer(expandRun(sc.Command, run), expandRun([]string{sc.Log}, run)[0])
	if err != nil {
		return nil, 0, nil, err
	}
	sampler := NewSampler(100*time.Millisecond, Target{"server", srv.PID()}, Target{"etcd", r.cfg.Processes.EtcdPID})
	w := sampler.Start()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go sampler.Run(sctx)
	d, err := srv.WaitReady(ctx, url, sc.ReadyTimeout)
	usage := w.Stop()
	return srv, d, usage, err
}

// stopLast stops the server left running and returns the startup ops
// with the graceful stop times added.
func (st *startup) stopLast(timeout time.Duration, log *slog.Logger) []Op {
	d, err := st.server.Stop(timeout)
	if err != nil {
		log.Warn("stopping the server", "err", err)
	} else {
		st.stops = append(st.stops, d)
	}
	return append(slices.Clone(st.result.Ops), Op{Name: "stop", Summary: Summarize(st.stops, 0, 0)})
}

// medianIndex is the index of the median of ds (the lower one for an even
// count), without reordering ds.
func medianIndex(ds []time.Duration) int {
	idx := make([]int, len(ds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ds[a], ds[b]) })
	return idx[(len(idx)-1)/2]
}
