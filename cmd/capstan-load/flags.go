package main

import (
	"flag"
	"time"

	"github.com/capstan-io/capstan/loadtest"
)

// bindFlags registers the run's flags on fs: the config they fill, and the
// list-valued ones to parse after fs.Parse.
func bindFlags(fs *flag.FlagSet) (cfg *loadtest.Config, workloads, fill, jsonPath *string) {
	cfg = &loadtest.Config{}
	fs.StringVar(&cfg.Name, "name", "server", "The server's name in the report.")
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "The kubeconfig to drive (may hold {run} when the tool starts the server).")
	fs.StringVar(&cfg.ContentType, "content-type", "protobuf", "Wire format: protobuf or json.")
	fs.BoolVar(&cfg.AllowRemote, "allow-remote", false, "Allow a server that is not on a loopback address.")
	workloads = fs.String("workloads", "crud,list,watch,informer", "Comma-separated workloads: startup, idle, fill, crud, reads, list, watch, watchers, informer, crds, admission. They run in that order.")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Minute, "Stop everything after this long.")
	fs.IntVar(&cfg.ObjectBytes, "object-bytes", 256, "Bytes of data in every config map.")
	fs.IntVar(&cfg.Concurrency, "concurrency", 8, "Workers of the bulk creates of fill, list and informer.")
	jsonPath = fs.String("json", "", "Also write the report as JSON to this file.")

	fs.IntVar(&cfg.Processes.ServerPID, "server-pid", 0, "Sample this process's RSS and CPU (/proc) as the server's; set by the tool when it starts the server.")
	fs.IntVar(&cfg.Processes.EtcdPID, "etcd-pid", 0, "Sample this process as etcd's (leave unset when etcd runs inside the server).")
	fs.StringVar(&cfg.Start.ReadyURL, "ready-url", "", "The started server's /readyz URL (polled anonymously, certificate not verified).")
	fs.StringVar(&cfg.Start.Log, "server-log", defaultServerLog(), "Where the started server's output goes.")
	fs.IntVar(&cfg.Start.Runs, "startup-runs", 1, "How many times to start the server; the last one serves the other workloads.")
	fs.DurationVar(&cfg.Start.ReadyTimeout, "ready-timeout", 3*time.Minute, "How long a start may take.")
	fs.DurationVar(&cfg.Start.StopTimeout, "stop-timeout", 30*time.Second, "How long to wait after SIGTERM before killing the server.")

	fs.DurationVar(&cfg.Idle, "idle", 10*time.Second, "idle: how long to wait.")
	fill = fs.String("fill", "10000", "fill: comma-separated, increasing numbers of config maps to read RSS at.")
	fs.IntVar(&cfg.CRUD.N, "crud-n", 2000, "crud: objects, each created, read, updated and deleted; admission: objects created in each phase.")
	fs.IntVar(&cfg.CRUD.C, "crud-c", 8, "crud and admission: concurrent workers.")
	fs.IntVar(&cfg.FillLists, "fill-lists", 0, "fill: concurrent full lists of all the config maps once the last size is reached, for the peak RSS they cost (0: none).")
	fs.IntVar(&cfg.Reads.N, "reads-n", 100, "reads: objects in the namespace read.")
	fs.IntVar(&cfg.Reads.C, "reads-c", 16, "reads: concurrent readers.")
	fs.DurationVar(&cfg.Reads.Duration, "reads-duration", 10*time.Second, "reads: how long GETs run, and then lists.")
	fs.IntVar(&cfg.Watchers.N, "watchers-n", 10000, "watchers: watches held open.")
	fs.IntVar(&cfg.Watchers.Writes, "watchers-writes", 10, "watchers: creates every watch must see.")
	fs.IntVar(&cfg.List.N, "list-n", 5000, "list: objects in the namespace listed.")
	fs.IntVar(&cfg.List.Runs, "list-runs", 10, "list: lists of each kind.")
	fs.IntVar(&cfg.List.PageSize, "list-page", 500, "list: limit of the paginated lists.")
	fs.IntVar(&cfg.Watch.Watchers, "watch-watchers", 50, "watch: concurrent watches.")
	fs.IntVar(&cfg.Watch.Writes, "watch-writes", 200, "watch: creates every watcher must see.")
	fs.DurationVar(&cfg.Watch.Timeout, "watch-timeout", time.Minute, "watch: how long to wait for events after the last write.")
	fs.IntVar(&cfg.Informer.N, "informer-n", 5000, "informer: objects to sync.")
	fs.IntVar(&cfg.Informer.Runs, "informer-runs", 3, "informer: syncs of each kind.")
	fs.IntVar(&cfg.CRDs.N, "crds-n", 1000, "crds: CustomResourceDefinitions to create.")
	fs.IntVar(&cfg.CRDs.C, "crds-c", 8, "crds: concurrent creates.")
	fs.IntVar(&cfg.CRDs.Groups, "crds-groups", 100, "crds: API groups the CRDs are spread over (0: a group per CRD).")
	fs.IntVar(&cfg.CRDs.FirstCRs, "crds-first-crs", 50, "crds: CRDs to create a first custom resource in, once all are served (0: none).")
	fs.DurationVar(&cfg.CRDs.Settle, "crds-settle", 90*time.Second, "crds: idle time before each memory reading (the watch caches of both servers keep 75 s of history).")
	fs.DurationVar(&cfg.CRDs.Timeout, "crds-timeout", 30*time.Minute, "crds: how long to wait for all CRDs to be served, and again for their deletion.")
	fs.StringVar(&cfg.CRDs.ProfileDir, "crds-profile-dir", "", "crds: save the server's heap profile here at each memory reading (needs --debug-socket).")
	fs.StringVar(&cfg.Processes.DebugSocket, "debug-socket", "", "The server's pprof unix socket (its --debug-socket-path; may hold {run}): "+
		"crds then collects garbage before reading memory and reports the Go heap too.")
	return cfg, workloads, fill, jsonPath
}
