//go:build race

package handlers

// raceEnabled: the race detector allocates on its own account, so tests
// that count allocations do not hold under it.
const raceEnabled = true
