package loadtest

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"
)

func TestParseStatusRSS(t *testing.T) {
	status := "Name:\tetcd\nUmask:\t0022\nVmPeak:\t 1000 kB\nVmHWM:\t  900 kB\nVmRSS:\t   123456 kB\nRssAnon:\t 1 kB\n"
	got, err := parseStatusRSS([]byte(status))
	if err != nil || got != 123456*1024 {
		t.Errorf("parseStatusRSS = %d, %v; want %d", got, err, 123456*1024)
	}
	for _, bad := range []string{"Name:\tkthreadd\nState:\tS\n", "VmRSS:\t12 MB\n", "VmRSS:\tx kB\n"} {
		if _, err := parseStatusRSS([]byte(bad)); err == nil {
			t.Errorf("parseStatusRSS(%q) succeeded", bad)
		}
	}
}

func TestParseStatCPU(t *testing.T) {
	// utime 250 and stime 50 ticks are fields 14 and 15; the command name
	// holds spaces and a parenthesis.
	stat := "4242 (kube apiserver) x) S 1 4242 4242 0 -1 4194560 5000 0 0 0 250 50 0 0 20 0 12 0 100 200000000 3000 18446744073709551615\n"
	got, err := parseStatCPU([]byte(stat))
	if err != nil || got != 3.0 {
		t.Errorf("parseStatCPU = %v, %v; want 3.0", got, err)
	}
	for _, bad := range []string{"4242 no-parens S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 u s"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("parseStatCPU(%q) succeeded", bad)
		}
	}
}

func TestReadProcSelf(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.RSSBytes < 1<<20 || p.CPUSeconds < 0 {
		t.Errorf("ReadProc(self) = %+v", p)
	}
	if _, err := ReadProc(1 << 30); err == nil {
		t.Error("ReadProc of a pid that cannot exist succeeded")
	}
}

func TestWindowUsage(t *testing.T) {
	w := &Window{first: map[string]ProcSample{"server": {100, 1}, "etcd": {50, 2}}, peak: map[string]uint64{}}
	w.add(w.first)
	w.add(map[string]ProcSample{"server": {300, 2}, "etcd": {10, 2.5}}) // sum 310
	w.add(map[string]ProcSample{"server": {200, 4}, "etcd": {200, 3}})  // sum 400
	u := w.usage()
	want := map[string]Usage{
		"server": {PeakRSSBytes: 300, RSSBytes: 200, CPUSeconds: 3},
		"etcd":   {PeakRSSBytes: 200, RSSBytes: 200, CPUSeconds: 1},
		SumRole:  {PeakRSSBytes: 400, RSSBytes: 400, CPUSeconds: 4},
	}
	for role, wu := range want {
		if u[role] != wu {
			t.Errorf("%s: %+v, want %+v", role, u[role], wu)
		}
	}
}

func TestSamplerSamplesItself(t *testing.T) {
	s := NewSampler(10*time.Millisecond, Target{"server", os.Getpid()}, Target{"etcd", 0})
	w := s.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	// Start's own reading is the window's last until Run's first tick.
	started := lastReading(s, w)
	for deadline := time.Now().Add(30 * time.Second); lastReading(s, w) == started; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Run took no sample in 30s")
		}
	}
	cancel()
	<-done
	u := w.Stop()
	if _, ok := u["etcd"]; ok || u["server"].PeakRSSBytes == 0 || u[SumRole].PeakRSSBytes != u["server"].PeakRSSBytes {
		t.Errorf("usage = %+v: want the server only, etcd (pid 0) skipped", u)
	}
}

// lastReading identifies the last reading w was given.
func lastReading(s *Sampler, w *Window) uintptr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return reflect.ValueOf(w.last).Pointer()
}
