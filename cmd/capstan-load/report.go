package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/capstan-io/capstan/loadtest"
)

// report writes the comparison document (and its chart) from the JSON
// reports of kube-apiserver, capstan and, optionally, embedded capstan.
func report(args []string) error {
	fs := flag.NewFlagSet("capstan-load report", flag.ContinueOnError)
	kube := fs.String("kube", "", "kube-apiserver's JSON report; several, comma-separated, are rounds: the document shows their medians.")
	capstan := fs.String("capstan", "", "capstan's JSON report (same etcd as kube); comma-separated rounds as --kube.")
	embedded := fs.String("embedded", "", "Optional: embedded capstan's JSON report; comma-separated rounds as --kube.")
	out := fs.String("markdown", "docs/benchmarks.md", "The document to write.")
	png := fs.String("png", "", "Optional: the chart to write; linked from the document by its path relative to it.")
	chartLink := fs.String("png-link", "", "The chart's link in the document (default: the file name of --png).")
	command := fs.String("command", "bench/compare.sh", "The command named in the document.")
	var notes multiFlag
	fs.Var(&notes, "note", "A key=value row for the Setup table (repeatable).")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := loadtest.Comparison{Command: *command, Notes: notes}
	var err error
	if c.Kube, err = readRounds(*kube); err != nil {
		return err
	}
	if c.Capstan, err = readRounds(*capstan); err != nil {
		return err
	}
	if *embedded != "" {
		if c.Embedded, err = readRounds(*embedded); err != nil {
			return err
		}
	}
	// The CRD section is bench/crds.sh's: keep it.
	if old, err := os.ReadFile(*out); err == nil {
		c.CRDSection = loadtest.CRDSectionOf(old)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if *png != "" {
		c.ChartFile = *chartLink
		if c.ChartFile == "" {
			c.ChartFile = filepath.Base(*png)
		}
		img := loadtest.Chart("latency per operation (ms, log scale)", c.ChartLegend(), c.ChartRows())
		if err := loadtest.WritePNG(*png, img); err != nil {
			return err
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := loadtest.WriteMarkdown(f, c); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readRounds reads the comma-separated reports in paths: one is itself,
// several are rounds merged into their medians.
func readRounds(paths string) (*loadtest.Report, error) {
	var reps []*loadtest.Report
	for _, p := range strings.Split(paths, ",") {
		rep, err := loadtest.ReadReport(p)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	if len(reps) == 1 {
		return reps[0], nil
	}
	return loadtest.MedianReport(reps)
}

// reportCRDs writes the CRD section of the document from the JSON
// reports of kube-apiserver and capstan, in place of the one it had.
func reportCRDs(args []string) error {
	fs := flag.NewFlagSet("capstan-load report-crds", flag.ContinueOnError)
	kube := fs.String("kube", "", "kube-apiserver's JSON report with the crds workload.")
	capstan := fs.String("capstan", "", "capstan's JSON report with the crds workload (same etcd as kube).")
	out := fs.String("markdown", "docs/benchmarks.md", "The document to update (made if missing).")
	command := fs.String("command", "bench/crds.sh", "The command named in the section.")
	var notes multiFlag
	fs.Var(&notes, "note", "A key=value line for the section's setup (repeatable).")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c := loadtest.Comparison{Command: *command, Notes: notes}
	var err error
	if c.Kube, err = loadtest.ReadReport(*kube); err != nil {
		return err
	}
	if c.Capstan, err = loadtest.ReadReport(*capstan); err != nil {
		return err
	}
	var section bytes.Buffer
	if err := loadtest.WriteCRDSection(&section, c); err != nil {
		return err
	}
	doc, err := os.ReadFile(*out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.WriteFile(*out, loadtest.SpliceCRDSection(doc, section.Bytes()), 0o644)
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint([]string(*m)) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
