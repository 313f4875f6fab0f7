package server

import "runtime/debug"

// releaseAfterStart returns the heap that start-up freed to the operating
// system once every post-start hook finished. Start-up (bootstrap
// reconciles, the type converter, first lists of every informer) raises
// the heap far above what an idle server keeps; the runtime hands the
// difference back only slowly, so without this an idle server holds
// memory it will not need again until it is busy. It runs once: one collection
// of a small heap.
func releaseAfterStart(hooksDone <-chan struct{}) {
	release := releaseMemory
	go func() {
		<-hooksDone
		release()
	}()
}

// releaseMemory is replaced by tests.
var releaseMemory = debug.FreeOSMemory
