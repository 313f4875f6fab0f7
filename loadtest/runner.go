package loadtest

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// runner holds what the workloads of one run share.
type runner struct {
	cfg     *Config
	log     *slog.Logger
	client  *Client
	sampler *Sampler
	runID   string // prefix of the run's namespaces
	// serverPID is the server's process, 0 if unknown; debugSocket its
	// pprof socket, "" if none.
	serverPID   int
	debugSocket string
}

// workloadFunc runs one workload in namespace ns and fills res.
type workloadFunc func(ctx context.Context, ns string, res *Result) error

// Run runs cfg's workloads and returns what they measured. A failed
// workload is recorded in its Result and the run goes on; the error
// returned is about the run itself (the server did not start, say).
func Run(ctx context.Context, cfg Config, log *slog.Logger) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	rep := &Report{Server: cfg.Name, Started: time.Now(), ContentType: cfg.ContentType, Machine: ReadMachine()}
	defer func() {
		rep.Seconds = time.Since(rep.Started).Seconds()
		rep.LoadAvgEnd = LoadAvg()
	}()
	r := &runner{cfg: &cfg, log: log, runID: fmt.Sprintf("capstan-load-%05x", rand.IntN(1<<20))}
	kubeconfig, serverPID := cfg.Kubeconfig, cfg.Processes.ServerPID
	if len(cfg.Start.Command) > 0 {
		st := r.startServers(ctx)
		if cfg.wants("startup") {
			rep.Results = append(rep.Results, st.result)
		}
		if st.server == nil {
			return rep, fmt.Errorf("starting the server: %s", st.result.Error)
		}
		defer func() {
			if cfg.wants("startup") {
				rep.Results[0].Ops = st.stopLast(cfg.Start.StopTimeout, log)
			} else {
				st.stopLast(cfg.Start.StopTimeout, log)
			}
		}()
		kubeconfig, serverPID = expandRun([]string{cfg.Kubeconfig}, cfg.Start.Runs)[0], st.server.PID()
		r.debugSocket = expandRun([]string{cfg.Processes.DebugSocket}, cfg.Start.Runs)[0]
	} else {
		r.debugSocket = cfg.Processes.DebugSocket
	}
	r.serverPID = serverPID
	var err error
	if r.client, err = NewClient(kubeconfig, cfg.ContentType, cfg.AllowRemote); err != nil {
		return rep, err
	}
	r.sampler = NewSampler(100*time.Millisecond, Target{"server", serverPID}, Target{"etcd", cfg.Processes.EtcdPID})
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go r.sampler.Run(sctx)
	rep.Results = append(rep.Results, r.runWorkloads(ctx)...)
	for _, err := range r.sampler.Errors() {
		log.Warn("sampling /proc", "err", err)
	}
	return rep, nil
}

// runWorkloads runs the selected workloads but startup, in Workloads' order.
func (r *runner) runWorkloads(ctx context.Context) []Result {
	funcs := map[string]workloadFunc{
		"idle": r.idle, "crud": r.crud, "reads": r.reads, "list": r.list, "watch": r.watch,
		"watchers": r.watchers, "informer": r.informer, "crds": r.crds, "admission": r.admission,
	}
	var out []Result
	for _, name := range Workloads {
		if !r.cfg.wants(name) || name == "startup" {
			continue
		}
		if ctx.Err() != nil {
			out = append(out, Result{Workload: name, Error: "not run: " + ctx.Err().Error()})
			continue
		}
		r.log.Info("workload", "name", name)
		if name == "fill" {
			out = append(out, r.fill(ctx)...)
			continue
		}
		out = append(out, r.runWorkload(ctx, name, funcs[name]))
	}
	return out
}

// runWorkload runs f in a fresh namespace, samples the server meanwhile,
// and deletes the namespace afterwards.
func (r *runner) runWorkload(ctx context.Context, name string, f workloadFunc) Result {
	res := Result{Workload: name}
	ns := r.runID + "-" + name
	if err := createNamespace(ctx, r.client.Kube, ns); err != nil {
		res.Error = fmt.Sprintf("creating namespace %s: %v", ns, err)
		return res
	}
	w := r.sampler.Start()
	err := f(ctx, ns, &res)
	if usage := w.Stop(); res.Resources == nil {
		res.Resources = usage
	}
	if err != nil {
		res.Error = err.Error()
		r.log.Error("workload failed", "name", name, "err", err)
	}
	r.cleanup(ctx, ns)
	return res
}

// cleanup deletes ns, even when ctx is done.
func (r *runner) cleanup(ctx context.Context, ns string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	if err := deleteNamespace(ctx, r.client.Kube, ns); err != nil {
		r.log.Warn("cleanup", "namespace", ns, "err", err)
	}
}

// idle waits, so that the window shows what the server does on its own.
func (r *runner) idle(ctx context.Context, _ string, res *Result) error {
	res.Params = map[string]int{"seconds": int(r.cfg.Idle.Seconds())}
	return sleep(ctx, r.cfg.Idle)
}
