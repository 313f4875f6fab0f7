package server_test

import (
	"sync/atomic"
	"testing"

	"github.com/capstan-io/capstan/server"
)

// The heap start-up freed is released once, after the last post-start
// hook returned, not when the first ones did.
func TestMemoryReleasedAfterAllPostStartHooks(t *testing.T) {
	var slowReturned atomic.Bool
	gate := make(chan struct{})
	released := make(chan bool, 2)
	t.Cleanup(server.SetReleaseMemory(func() { released <- slowReturned.Load() }))
	fastDone := make(chan struct{})
	startServer(t, 0, map[string]server.HookFunc{
		"fast": func(server.HookContext) error { close(fastDone); return nil },
		"slow": func(server.HookContext) error {
			<-gate
			slowReturned.Store(true)
			return nil
		},
	})
	<-fastDone
	close(gate)
	if afterSlow := <-released; !afterSlow {
		t.Fatal("memory was released before the slow post-start hook returned")
	}
	select {
	case <-released:
		t.Fatal("memory was released twice")
	default:
	}
}
