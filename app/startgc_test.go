package app

import (
	"runtime/debug"
	"testing"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// The target is raised while any start is under way and restored after
// the last, whatever order the starts end in.
func TestStartGCTargetRestoredAfterTheLastStart(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	first := relaxGCForStart()
	if got := gcPercent(); got != startGCPercent {
		t.Fatalf("during a start: GOGC %d, want %d", got, startGCPercent)
	}
	second := relaxGCForStart()
	first()
	first() // once only: it must not end the second start's claim
	if got := gcPercent(); got != startGCPercent {
		t.Fatalf("while a second start is under way: GOGC %d, want %d", got, startGCPercent)
	}
	second()
	if got := gcPercent(); got != 77 {
		t.Fatalf("after the starts: GOGC %d, want the prior 77", got)
	}
}

// GOGC set by the operator is left alone.
func TestStartGCTargetKeepsGOGCFromTheEnvironment(t *testing.T) {
	t.Setenv("GOGC", "50")
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	restore := relaxGCForStart()
	defer restore()
	if got := gcPercent(); got != 50 {
		t.Fatalf("GOGC %d, want the environment's 50", got)
	}
}
