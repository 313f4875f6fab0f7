package server

// SetReleaseMemory replaces what runs once every post-start hook
// finished, until the returned func restores it.
func SetReleaseMemory(f func()) (restore func()) {
	old := releaseMemory
	releaseMemory = f
	return func() { releaseMemory = old }
}
