package startgc

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// waitForFinalizers returns once a finalizer queued by a collection has
// run, and with it, most likely, those queued with it.
func waitForFinalizers() {
	done := make(chan struct{})
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { close(done) })
	for {
		runtime.GC()
		select {
		case <-done:
			return
		default:
			runtime.Gosched()
		}
	}
}

// The early target holds until the first collection, which lowers it to
// the start's; a start claiming meanwhile restores the target from before
// the early one.
func TestEarlyTargetUntilTheFirstCollection(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	BeginEarly()
	if got := gcPercent(); got != EarlyPercent {
		t.Fatalf("before the first collection: GOGC %d, want %d", got, EarlyPercent)
	}
	if prior, early := Claim(); !early || prior != 77 {
		t.Fatalf("Claim = %d, %v; want the prior 77, early", prior, early)
	}
	// The finalizer runs on its own goroutine, after the collection.
	for i := 0; gcPercent() != StartPercent; i++ {
		if i == 1000 {
			t.Fatalf("after %d collections: GOGC %d, want %d", i, gcPercent(), StartPercent)
		}
		runtime.GC()
		runtime.Gosched()
	}
	if _, early := Claim(); early {
		t.Fatal("Claim after the first collection reports the early target")
	}
}

// A start that ends before the first collection keeps the target it
// restores.
func TestEndBeforeTheFirstCollection(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	BeginEarly()
	End()
	debug.SetGCPercent(77)
	waitForFinalizers()
	if got := gcPercent(); got != 77 {
		t.Fatalf("GOGC %d after the start ended, want the restored 77", got)
	}
}

// GOGC set by the operator is left alone.
func TestEarlyTargetKeepsGOGCFromTheEnvironment(t *testing.T) {
	t.Setenv("GOGC", "50")
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	BeginEarly()
	if got := gcPercent(); got != 50 {
		t.Fatalf("GOGC %d, want the environment's 50", got)
	}
	if _, early := Claim(); early {
		t.Fatal("early target claimed with GOGC set")
	}
}
