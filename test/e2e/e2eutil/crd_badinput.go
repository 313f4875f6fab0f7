package e2eutil

import (
	"strings"
	"testing"
)

// KeysWith returns the etcd keys that contain part.
func (e *Env) KeysWith(t *testing.T, part string) []string {
	t.Helper()
	var out []string
	for _, k := range e.EtcdKeys(t) {
		if strings.Contains(k, part) {
			out = append(out, k)
		}
	}
	return out
}
