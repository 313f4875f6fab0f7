//go:build !linux

package server

// releaseStartPages does nothing but on Linux.
func releaseStartPages() {}
