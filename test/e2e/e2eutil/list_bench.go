package e2eutil

import (
	"syscall"
	"testing"
	"time"
)

// CPUTime is the CPU time the process has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports the CPU time used since start per op.
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((CPUTime()-start).Microseconds())/float64(b.N), "cpu-us/op")
}
