package schema

import (
	"maps"
	"slices"
)

// sortedKeys lists a map's keys in order, so that errors come out in the
// same order every time.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
