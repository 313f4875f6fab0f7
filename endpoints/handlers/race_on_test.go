//go:build race

package handlers

// raceEnabled: the race detector allocates on its own account and drops
// a share of what sync.Pool is given back: JSON lists allocate more under it.
const raceEnabled = true
