package app

import (
	"os"
	"runtime/debug"
	"sync"

	"github.com/capstan-io/capstan/internal/startgc"
)

// startGCPercent is the garbage collector's target while the server
// starts. The start allocates several times the heap it keeps (the
// managed-fields types, the bootstrap writes, the first lists of every
// informer), so at the default target of 100 the collector runs again and
// again over a heap that is mostly garbage: about a tenth of the CPU until
// ready. A higher target for those few hundred milliseconds lets the heap
// grow a little more instead; the heap freed is returned to the operating
// system once the post-start hooks end (server.releaseAfterStart). The
// command sets an even higher one until the first collection
// (internal/startgc).
const startGCPercent = startgc.StartPercent

// startGC counts the servers of the process that are starting (tests run
// several): the target is raised while any is, and restored after the
// last.
var startGC struct {
	mu       sync.Mutex // guards the fields below
	starting int
	prior    int
}

// relaxGCForStart raises the collector's target for a server's start,
// unless GOGC is set in the environment, and returns the function that
// ends the start's claim (once; calling it again does nothing).
func relaxGCForStart() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	startGC.mu.Lock()
	defer startGC.mu.Unlock()
	if startGC.starting == 0 {
		if prior, early := startgc.Claim(); early {
			// The first collection lowers the early target to ours.
			startGC.prior = prior
		} else {
			startGC.prior = debug.SetGCPercent(startGCPercent)
		}
	}
	startGC.starting++
	return sync.OnceFunc(func() {
		startGC.mu.Lock()
		defer startGC.mu.Unlock()
		if startGC.starting--; startGC.starting == 0 {
			startgc.End()
			debug.SetGCPercent(startGC.prior)
		}
	})
}
