// Package startgc holds the garbage collector's targets while the process
// starts. Package init alone allocates a few megabytes, so at the default
// target the collector runs twice before main, and again a little later
// over a heap that is still all kept (schemes, OpenAPI definitions): about
// a tenth of the CPU of a start. The early target (BeginEarly, from
// package early, imported first by the command) holds the collector back
// until the heap reaches EarlyPercent/100 × 4 MB; after that first
// collection the start's target applies, so that a start over a large
// cluster does not grow its heap EarlyPercent/100 times over.
package startgc

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

const (
	// EarlyPercent is the target until the first collection: it comes
	// once the heap reaches 32 MB, past what a fresh server allocates until
	// it is ready.
	EarlyPercent = 800
	// StartPercent is the target from the first collection until the start
	// ends (app: the post-start hooks have run).
	StartPercent = 300
)

var state struct {
	mu    sync.Mutex // guards the fields below
	early bool       // the early target is set
	prior int        // the target before it
}

// BeginEarly sets the early target, unless GOGC is set in the
// environment, until the first collection.
func BeginEarly() {
	if os.Getenv("GOGC") != "" {
		return
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	state.prior = debug.SetGCPercent(EarlyPercent)
	state.early = true
	// A finalizer runs after the collection that finds its object gone:
	// the first one. The object has a pointer and 16 bytes or more, so
	// that the tiny allocator does not batch it with others.
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { afterFirstCollection() })
}

type sentinel struct {
	_ *int
	_ [2]int
}

func afterFirstCollection() {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.early {
		state.early = false
		debug.SetGCPercent(StartPercent)
	}
}

// Claim is called when a start raises the target: early reports whether
// the early target is still set, and prior is then the target before it
// (the one to restore when the start ends). The early target stays until
// the first collection, which lowers it to StartPercent.
func Claim() (prior int, early bool) {
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.prior, state.early
}

// End ends the early target, if it is still set, before the start's
// claim restores the prior target.
func End() {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.early = false
}
