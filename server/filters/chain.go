// Package filters holds the handler chain's filters, one per file. Each is
// a func(http.Handler) http.Handler; the server builds the chain from a
// slice written in the order the filters run.
package filters

import "net/http"

// Filter wraps a handler.
type Filter func(http.Handler) http.Handler

// Chain returns h wrapped so that filters[0] runs first. A nil filter,
// one that configuration turned off, is left out.
func Chain(h http.Handler, filters ...Filter) http.Handler {
	for i := len(filters) - 1; i >= 0; i-- {
		if filters[i] != nil {
			h = filters[i](h)
		}
	}
	return h
}
