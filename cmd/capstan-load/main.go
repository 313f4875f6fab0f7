// capstan-load drives a Kubernetes API server with client-go and reports
// throughput, latency percentiles and the server's (and etcd's) memory and
// CPU per workload. `capstan-load report` turns the JSON of several runs
// into the benchmark document. See loadtest's documentation and
// bench/compare.sh.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/capstan-io/capstan/loadtest"
)

const usage = `usage:
  capstan-load [flags] [-- server command...]   run workloads against a server
  capstan-load report [flags]                   write the comparison document
  capstan-load report-crds [flags]              write its section on CRDs (bench/crds.sh)

With a server command (after --), the tool starts the server itself,
--startup-runs times, times each start to /readyz 200, keeps the last one
running for the other workloads, and stops it at the end. "{run}" in the
command, --kubeconfig, --ready-url and --server-log is replaced by the
start's number (1, 2, ...), so that each start can use a fresh data dir or
etcd prefix.

Flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if len(os.Args) > 1 && os.Args[1] == "report" {
		err = report(os.Args[2:])
	} else if len(os.Args) > 1 && os.Args[1] == "report-crds" {
		err = reportCRDs(os.Args[2:])
	} else {
		err = run(ctx, os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "capstan-load:", err)
		os.Exit(1)
	}
}

// run parses the flags, runs the workloads and writes the table and JSON.
func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("capstan-load", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	cfg, workloads, fill, jsonPath := bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Start.Command = fs.Args()
	cfg.Workloads = splitList(*workloads)
	sizes, err := parseInts(*fill)
	if err != nil {
		return fmt.Errorf("--fill: %w", err)
	}
	cfg.Fill = sizes
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	rep, runErr := loadtest.Run(ctx, *cfg, log)
	if rep == nil {
		return runErr
	}
	rep.Args = append([]string{filepath.Base(os.Args[0])}, args...)
	if err := rep.WriteTable(os.Stdout); err != nil {
		return err
	}
	if *jsonPath != "" {
		if err := rep.WriteJSON(*jsonPath); err != nil {
			return err
		}
	}
	return errors.Join(runErr, failed(rep))
}

// failed is an error naming the workloads that failed, if any did.
func failed(rep *loadtest.Report) error {
	var names []string
	for _, r := range rep.Results {
		if r.Error != "" {
			names = append(names, r.Workload)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("workloads failed: %s", strings.Join(names, ", "))
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// defaultServerLog is where a started server's output goes.
func defaultServerLog() string {
	return filepath.Join(os.TempDir(), "capstan-load-server-{run}.log")
}
