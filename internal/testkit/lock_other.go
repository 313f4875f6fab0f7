//go:build !unix

package testkit

// lockFile does not lock where flock is missing: parallel test packages may
// then build kubectl twice, which is slow but harmless.
func lockFile(string) (func(), error) { return func() {}, nil }
