package loadtest

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Workloads lists every workload, in the order they run.
var Workloads = []string{"startup", "idle", "fill", "crud", "reads", "list", "watch", "watchers", "informer", "crds", "admission"}

// Config is what one run does.
type Config struct {
	Name        string // the server's name in the report
	Kubeconfig  string // may hold {run} when the tool starts the server
	ContentType string // "protobuf" or "json"
	AllowRemote bool
	Workloads   []string
	Timeout     time.Duration // the whole run's
	ObjectBytes int           // payload size of every config map
	Concurrency int           // of the bulk creates that fill, list and informer make

	Processes ProcessConfig
	Start     StartConfig

	Idle time.Duration
	Fill []int // cumulative numbers of config maps to measure RSS at
	// FillLists is how many concurrent full lists of the filled namespace
	// the fill workload times once it holds the last size (0: none).
	FillLists int
	CRUD      CRUDConfig
	Reads     ReadsConfig
	List      ListConfig
	Watch     WatchConfig
	Watchers  WatchersConfig
	Informer  InformerConfig
	CRDs      CRDsConfig
}

// ProcessConfig names the processes the tool samples and inspects.
type ProcessConfig struct {
	ServerPID, EtcdPID int
	// DebugSocket is the server's pprof unix socket (--debug-socket-path of
	// both servers; may hold {run}): where set, the crds workload collects
	// garbage before it reads memory and reports the Go heap as well.
	DebugSocket string
}

// StartConfig says how to start the server, for the startup workload.
type StartConfig struct {
	Command      []string // {run} is replaced by the run's number, from 1
	ReadyURL     string   // may hold {run}
	Log          string   // the server's output; may hold {run}
	Runs         int      // starts; all but the last are stopped at once
	ReadyTimeout time.Duration
	StopTimeout  time.Duration
}

// CRUDConfig: N objects, each created, read, updated and deleted, by C workers.
type CRUDConfig struct{ N, C int }

// ReadsConfig: N objects, read by C workers for Duration with GETs, then
// for Duration with full lists.
type ReadsConfig struct {
	N, C     int
	Duration time.Duration
}

// WatchersConfig: N watches held open on one namespace, then Writes
// creates that every one must deliver.
type WatchersConfig struct{ N, Writes int }

// ListConfig: N objects, each kind of list done Runs times.
type ListConfig struct{ N, Runs, PageSize int }

// WatchConfig: Watchers watches of one namespace, Writes creates in it.
type WatchConfig struct {
	Watchers, Writes int
	Timeout          time.Duration // to wait for the last event
}

// InformerConfig: N objects, each kind of informer synced Runs times.
type InformerConfig struct{ N, Runs int }

// CRDsConfig: N CustomResourceDefinitions in Groups groups (0: one group
// each) created by C workers, waited for until Established and listed by
// discovery; memory read after Settle; then one custom resource created in
// each of FirstCRs of them, the first request that builds its endpoints.
type CRDsConfig struct {
	N, C, Groups, FirstCRs int
	Settle                 time.Duration // before reading the memory CRDs hold when idle
	Timeout                time.Duration // to wait for all to be served, and again for their deletion
	// ProfileDir, if set, receives the server's heap profile at each
	// memory reading (heap-before.pb.gz, ...), through DebugSocket.
	ProfileDir string
}

// Validate reports every invalid field.
func (c *Config) Validate() error {
	var errs []error
	for _, w := range c.Workloads {
		if !slices.Contains(Workloads, w) {
			errs = append(errs, fmt.Errorf("unknown workload %q (known: %v)", w, Workloads))
		}
	}
	if slices.Contains(c.Workloads, "startup") && len(c.Start.Command) == 0 {
		errs = append(errs, errors.New("the startup workload needs the server command after --"))
	}
	if len(c.Start.Command) > 0 && (c.Start.ReadyURL == "" || c.Start.Runs < 1) {
		errs = append(errs, errors.New("a server command needs --ready-url and --startup-runs >= 1"))
	}
	if len(c.Start.Command) == 0 && c.Kubeconfig == "" {
		errs = append(errs, errors.New("--kubeconfig is required"))
	}
	if c.Timeout <= 0 || c.Concurrency < 1 || c.ObjectBytes < 0 {
		errs = append(errs, errors.New("--timeout and --concurrency must be positive, --object-bytes not negative"))
	}
	if c.wants("reads") && (c.Reads.N < 1 || c.Reads.C < 1 || c.Reads.Duration <= 0) {
		errs = append(errs, errors.New("--reads-n, --reads-c and --reads-duration must be positive"))
	}
	if c.wants("watchers") && (c.Watchers.N < 1 || c.Watchers.Writes < 1) {
		errs = append(errs, errors.New("--watchers-n and --watchers-writes must be positive"))
	}
	if c.FillLists < 0 {
		errs = append(errs, errors.New("--fill-lists must not be negative"))
	}
	if c.CRUD.C < 1 || c.List.PageSize < 1 || c.List.Runs < 1 || c.Watch.Watchers < 1 || c.Informer.Runs < 1 {
		errs = append(errs, errors.New("concurrency, page size, runs and watchers must be at least 1"))
	}
	if c.wants("crds") && (c.CRDs.N < 1 || c.CRDs.C < 1 || c.CRDs.Groups < 0 || c.CRDs.FirstCRs < 0 ||
		c.CRDs.FirstCRs > c.CRDs.N || c.CRDs.Settle < 0 || c.CRDs.Timeout <= 0) {
		errs = append(errs, errors.New("--crds-n and --crds-c must be at least 1, --crds-groups and --crds-first-crs not negative, "+
			"--crds-first-crs at most --crds-n, --crds-timeout positive"))
	}
	if !slices.IsSorted(c.Fill) {
		errs = append(errs, errors.New("--fill sizes must be increasing"))
	}
	if _, ok := ContentTypes[c.ContentType]; !ok {
		errs = append(errs, fmt.Errorf("unknown --content-type %q", c.ContentType))
	}
	return errors.Join(errs...)
}

// wants reports whether workload w was selected.
func (c *Config) wants(w string) bool { return slices.Contains(c.Workloads, w) }
