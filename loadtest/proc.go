package loadtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// It is 100 on every Linux architecture Go supports (sysconf(_SC_CLK_TCK)).
const clockTicks = 100

// ProcSample is one reading of a process's resident memory and CPU time.
type ProcSample struct {
	RSSBytes   uint64
	CPUSeconds float64 // user + system, since the process started
}

// ReadProc reads /proc/<pid>/status (VmRSS) and /proc/<pid>/stat (utime,
// stime) of pid.
func ReadProc(pid int) (ProcSample, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return ProcSample{}, err
	}
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return ProcSample{}, err
	}
	rss, err := parseStatusRSS(status)
	if err != nil {
		return ProcSample{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return ProcSample{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	return ProcSample{RSSBytes: rss, CPUSeconds: cpu}, nil
}

// parseStatusRSS returns VmRSS of a /proc/<pid>/status file, in bytes.
func parseStatusRSS(status []byte) (uint64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) != 2 || string(fields[1]) != "kB" {
			return 0, fmt.Errorf("unexpected VmRSS line %q", bytes.TrimSpace(line))
		}
		kb, err := strconv.ParseUint(string(fields[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS: %w", err)
		}
		return kb * 1024, nil
	}
	return 0, errors.New("no VmRSS in status (a kernel thread or a zombie?)")
}

// parseStatCPU returns utime + stime of a /proc/<pid>/stat line, in
// seconds. The command name (field 2) is in parentheses and may itself hold
// spaces and parentheses, so fields are counted after the last ')'.
func parseStatCPU(stat []byte) (float64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("stat: no command name")
	}
	// After ')': state (field 3) ... utime (14), stime (15).
	fields := bytes.Fields(stat[i+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name, want at least 13", len(fields))
	}
	var ticks uint64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: %w", err)
		}
		ticks += n
	}
	return float64(ticks) / clockTicks, nil
}

// Usage is what one process (or the sum of several) used over a window.
type Usage struct {
	PeakRSSBytes uint64  `json:"peakRSSBytes"`
	RSSBytes     uint64  `json:"rssBytes"` // at the end of the window
	CPUSeconds   float64 `json:"cpuSeconds"`
}

// Target is a process to sample, by role ("server", "etcd").
type Target struct {
	Role string
	PID  int
}

// SumRole is the role under which a Window reports all targets together.
const SumRole = "sum"

// Sampler reads its targets' /proc every interval and feeds the open
// windows.
type Sampler struct {
	targets  []Target
	interval time.Duration

	mu      sync.Mutex // guards the fields below
	windows map[*Window]struct{}
	errs    []error
}

// NewSampler samples targets (those with a positive PID) every interval.
func NewSampler(interval time.Duration, targets ...Target) *Sampler {
	s := &Sampler{interval: interval, windows: map[*Window]struct{}{}}
	for _, t := range targets {
		if t.PID > 0 {
			s.targets = append(s.targets, t)
		}
	}
	return s
}

// Run samples until ctx is done.
func (s *Sampler) Run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sample()
		}
	}
}

// Errors returns the read errors seen so far (a target that exited, say).
func (s *Sampler) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs
}

func (s *Sampler) read() map[string]ProcSample {
	out := make(map[string]ProcSample, len(s.targets))
	for _, t := range s.targets {
		p, err := ReadProc(t.PID)
		if err != nil {
			s.mu.Lock()
			if len(s.errs) < 10 {
				s.errs = append(s.errs, fmt.Errorf("%s: %w", t.Role, err))
			}
			s.mu.Unlock()
			continue
		}
		out[t.Role] = p
	}
	return out
}

func (s *Sampler) sample() {
	r := s.read()
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.windows {
		w.add(r)
	}
}

// Start opens a window: a reading now, then every interval until Stop.
func (s *Sampler) Start() *Window {
	w := &Window{s: s, first: s.read(), peak: map[string]uint64{}}
	w.add(w.first)
	s.mu.Lock()
	s.windows[w] = struct{}{}
	s.mu.Unlock()
	return w
}

// Window is the usage of the targets between Sampler.Start and Stop.
type Window struct {
	s     *Sampler
	first map[string]ProcSample
	last  map[string]ProcSample
	peak  map[string]uint64 // by role, and SumRole for the peak of the sum
}

// add folds in one reading; the sampler's mutex is held or w is not shared yet.
func (w *Window) add(r map[string]ProcSample) {
	var sum uint64
	for role, p := range r {
		w.peak[role] = max(w.peak[role], p.RSSBytes)
		sum += p.RSSBytes
	}
	w.peak[SumRole] = max(w.peak[SumRole], sum)
	w.last = r
}

// Stop closes the window with a last reading and returns each target's
// usage by role, and their sum under SumRole.
func (w *Window) Stop() map[string]Usage {
	r := w.s.read()
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	delete(w.s.windows, w)
	w.add(r)
	return w.usage()
}

func (w *Window) usage() map[string]Usage {
	out := map[string]Usage{}
	var sum Usage
	for role, end := range w.last {
		u := Usage{PeakRSSBytes: w.peak[role], RSSBytes: end.RSSBytes}
		if start, ok := w.first[role]; ok {
			u.CPUSeconds = end.CPUSeconds - start.CPUSeconds
		}
		out[role] = u
		sum.RSSBytes += u.RSSBytes
		sum.CPUSeconds += u.CPUSeconds
	}
	if len(out) == 0 {
		return nil
	}
	sum.PeakRSSBytes = w.peak[SumRole]
	out[SumRole] = sum
	return out
}
